#!/usr/bin/env bash
# Builds go-containerregistry's crane (pushes the release's image) and registry (an
# in-memory OCI registry the node suite releases into), and actionlint (CI lints
# .github/workflows with it), from Go modules (no binary downloads).
#
#   tools/build-oci-tools.sh            -> prints the directory holding crane, registry, actionlint
#   tools/build-oci-tools.sh --find     -> the same when all are built and current; else exit 1,
#                                          building nothing
#
# Binaries go to ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/oci-tools-ggcr-v0.22.1-actionlint-v1.7.12/
# and are kept there while current; tools/lib/go-build.sh is the skeleton (stamp, lock,
# output). Sources are pinned by tools/oci-tools/go.{mod,sum}.
set -euo pipefail
# shellcheck source=lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"

readonly GGCR_VERSION=v0.22.1
readonly ACTIONLINT_VERSION=v1.7.12
readonly MODULE_DIR="$TOOLS_DIR/oci-tools"

pinned "$MODULE_DIR" github.com/google/go-containerregistry "$GGCR_VERSION"
pinned "$MODULE_DIR" github.com/rhysd/actionlint "$ACTIONLINT_VERSION"
out_dir "oci-tools-ggcr-$GGCR_VERSION-actionlint-$ACTIONLINT_VERSION"

# The version stamps of each project's own release builds. registry has no version flag:
# it is checked to run by -h (Go's flag package prints the flags and exits 0).
go_binary crane "$MODULE_DIR" github.com/google/go-containerregistry/cmd/crane \
  "-s -w -X github.com/google/go-containerregistry/cmd/crane/cmd.Version=$GGCR_VERSION" "" version
go_binary registry "$MODULE_DIR" github.com/google/go-containerregistry/cmd/registry "-s -w" "" -h
go_binary actionlint "$MODULE_DIR" github.com/rhysd/actionlint/cmd/actionlint \
  "-s -w -X github.com/rhysd/actionlint.version=$ACTIONLINT_VERSION" "" -version

build_declared "$@"
