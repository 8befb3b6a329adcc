#!/usr/bin/env bash
# Builds tools/flux-apply (Flux's apply library, fluxcd/pkg/ssa, as
# kustomize-controller calls it) from Go modules.
#
#   tools/build-flux-apply.sh            -> prints the binary's path
#
# The binary goes to ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/flux-apply-ssa-v0.78.0/
# and is rebuilt when the helper's source (main.go, go.mod, go.sum) changes.
# Progress goes to stderr; the only stdout line is the binary's path.
set -euo pipefail

readonly SSA_VERSION=v0.78.0

TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
readonly TOOLS_DIR
log() { printf '[build-flux-apply] %s\n' "$*" >&2; }
# shellcheck source=lib/go-build.sh
source "$TOOLS_DIR/lib/go-build.sh"

OUT_DIR=$(cache_dir "flux-apply-ssa-$SSA_VERSION")
readonly OUT_DIR
readonly MODULE_DIR="$TOOLS_DIR/flux-apply"

grep -q "github.com/fluxcd/pkg/ssa $SSA_VERSION" "$MODULE_DIR/go.mod" ||
  { log "ERROR: tools/flux-apply/go.mod does not require fluxcd/pkg/ssa $SSA_VERSION"; exit 1; }
sum=$(cat "$MODULE_DIR/main.go" "$MODULE_DIR/go.mod" "$MODULE_DIR/go.sum" | sha256sum | cut -d' ' -f1)
stamp="$OUT_DIR/flux-apply.sha256"
if [[ -x "$OUT_DIR/flux-apply" && "$(cat "$stamp" 2>/dev/null)" == "$sum" ]]; then
  printf '%s\n' "$OUT_DIR/flux-apply"
  exit 0
fi
if lock_out_dir flux-apply && [[ "$(cat "$stamp" 2>/dev/null)" == "$sum" ]]; then
  printf '%s\n' "$OUT_DIR/flux-apply"
  exit 0
fi

check_go "flux-apply (fluxcd/pkg/ssa $SSA_VERSION)"
rm -f "$OUT_DIR/flux-apply"
build_one flux-apply "$MODULE_DIR" . "-s -w"
printf '%s\n' "$sum" >"$stamp"
printf '%s\n' "$OUT_DIR/flux-apply"
