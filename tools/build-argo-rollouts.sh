#!/usr/bin/env bash
# Builds Argo Rollouts' controller from Go modules (the library packages of
# github.com/argoproj/argo-rollouts; tools/argo-rollouts holds our small main, see
# its go.mod) and makes sure the CRDs its informers need are in tools/crds.sh's
# directory (all five of the module's manifests/crds).
#
#   tools/build-argo-rollouts.sh            -> prints the binary's directory
#
# The binary goes to ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/argo-rollouts-v1.8.3/
# and is kept there; progress and timings go to stderr; the only stdout line is
# the directory. Sources are pinned by tools/argo-rollouts/go.{mod,sum}.
set -euo pipefail

readonly ARGO_ROLLOUTS_VERSION=v1.8.3
readonly BINARY=argo-rollouts-controller

TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
readonly TOOLS_DIR
log() { printf '[build-argo-rollouts] %s\n' "$*" >&2; }
# shellcheck source=lib/go-build.sh
source "$TOOLS_DIR/lib/go-build.sh"

OUT_DIR=$(cache_dir "argo-rollouts-$ARGO_ROLLOUTS_VERSION")
readonly OUT_DIR
readonly MODULE_DIR="$TOOLS_DIR/argo-rollouts"

# The CRDs come from the same pinned module version, copied out once by tools/crds.sh.
bash "$TOOLS_DIR/crds.sh" >/dev/null

# The main is this repository's code: a binary built from another version of it
# is removed, so that the build below makes it anew.
readonly STAMP="$OUT_DIR/sources.sha256"
if [[ "$(cat "$STAMP" 2>/dev/null)" != "$(sources_sum "$MODULE_DIR")" ]]; then
  rm -f "$STAMP" "$OUT_DIR/$BINARY"
fi

if has_all_binaries "$OUT_DIR" "$BINARY" || lock_out_dir "$BINARY"; then
  printf '%s\n' "$OUT_DIR"
  exit 0
fi

check_go "Argo Rollouts $ARGO_ROLLOUTS_VERSION"
total_start=$SECONDS
build_one "$BINARY" "$MODULE_DIR" . "-s -w -X main.Version=$ARGO_ROLLOUTS_VERSION"
has_all_binaries "$OUT_DIR" "$BINARY" || die "$BINARY missing from $OUT_DIR after build"
sources_sum "$MODULE_DIR" >"$STAMP"
if (( ${#TIMINGS[@]} > 0 )); then
  log "build durations: ${TIMINGS[*]} (total $((SECONDS - total_start))s; Argo Rollouts $ARGO_ROLLOUTS_VERSION)"
fi
printf '%s\n' "$OUT_DIR"
