#!/usr/bin/env bash
# Builds tools/flux-apply (Flux's apply library, fluxcd/pkg/ssa, as
# kustomize-controller calls it) from Go modules.
#
#   tools/build-flux-apply.sh [--find]   -> prints the binary's directory
#
# The binary goes to ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/flux-apply-ssa-v0.78.0/
# and is kept there while current; tools/lib/go-build.sh is the skeleton (stamp, lock,
# output). Sources are pinned by tools/flux-apply/go.{mod,sum}.
set -euo pipefail
# shellcheck source=lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"

readonly SSA_VERSION=v0.78.0
readonly MODULE_DIR="$TOOLS_DIR/flux-apply"

pinned "$MODULE_DIR" github.com/fluxcd/pkg/ssa "$SSA_VERSION"
out_dir "flux-apply-ssa-$SSA_VERSION"

go_binary flux-apply "$MODULE_DIR" . "-s -w"

build_declared "$@"
