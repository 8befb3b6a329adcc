#!/usr/bin/env bash
# Builds Argo Rollouts' controller from Go modules (the library packages of
# github.com/argoproj/argo-rollouts; tools/argo-rollouts holds our small main, see
# its go.mod) and makes sure the CRDs its informers need are in tools/crds.sh's
# directory (all five of the module's manifests/crds).
#
#   tools/build-argo-rollouts.sh [--find]   -> prints the binary's directory
#
# The binary goes to ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/argo-rollouts-v1.8.3/
# and is kept there while current; tools/lib/go-build.sh is the skeleton (stamp, lock,
# output). Sources are pinned by tools/argo-rollouts/go.{mod,sum}.
set -euo pipefail
# shellcheck source=lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"

readonly ARGO_ROLLOUTS_VERSION=v1.8.3
readonly MODULE_DIR="$TOOLS_DIR/argo-rollouts"

pinned "$MODULE_DIR" github.com/argoproj/argo-rollouts "$ARGO_ROLLOUTS_VERSION"
out_dir "argo-rollouts-$ARGO_ROLLOUTS_VERSION"

go_binary argo-rollouts-controller "$MODULE_DIR" . "-s -w -X main.Version=$ARGO_ROLLOUTS_VERSION"

# The CRDs come from the same pinned module version, copied out once by tools/crds.sh.
[[ "${1:-}" == --find ]] || bash "$TOOLS_DIR/crds.sh" >/dev/null
build_declared "$@"
