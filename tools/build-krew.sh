#!/usr/bin/env bash
# Builds krew (kubectl's plugin manager) from Go modules, for the test that installs the
# release's krew manifest and archive with it (test/e2e/krew-install.test.ts).
#
#   tools/build-krew.sh [--find]   -> prints the directory holding `krew`
#
# Binaries go to ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/krew-v0.4.3/ and are kept
# there while current; tools/lib/go-build.sh is the skeleton (stamp, lock, output).
# Sources are pinned by tools/krew/go.{mod,sum}.
set -euo pipefail
# shellcheck source=lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"

readonly KREW_VERSION=v0.4.3

pinned "$TOOLS_DIR/krew" sigs.k8s.io/krew "$KREW_VERSION"
out_dir "krew-$KREW_VERSION"

# The stamps of krew's own release builds (hack/make-binaries.sh): `krew version` reports them.
go_binary krew "$TOOLS_DIR/krew" sigs.k8s.io/krew/cmd/krew \
  "-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$KREW_VERSION -X sigs.k8s.io/krew/internal/version.gitCommit=release" "" version

build_declared "$@"
