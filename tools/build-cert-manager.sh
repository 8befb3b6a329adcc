#!/usr/bin/env bash
# Builds cert-manager's controller and cainjector from Go modules (the library
# packages of github.com/cert-manager/cert-manager; tools/cert-manager holds the
# two small mains, see its go.mod for why) and puts cert-manager's CRDs, from the
# same module version, beside them.
#
#   tools/build-cert-manager.sh            -> prints the binaries' directory
#
# Binaries and crds.yaml go to ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/cert-manager-v1.21.2/
# and are kept there; progress and timings go to stderr; the only stdout line is
# the directory. Sources are pinned by tools/cert-manager/go.{mod,sum}.
set -euo pipefail

readonly CERT_MANAGER_VERSION=v1.21.2
readonly CERT_MANAGER_MODULE=github.com/cert-manager/cert-manager
readonly BINARIES=(cert-manager-controller cert-manager-cainjector)

TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
readonly TOOLS_DIR
log() { printf '[build-cert-manager] %s\n' "$*" >&2; }
# shellcheck source=lib/go-build.sh
source "$TOOLS_DIR/lib/go-build.sh"

OUT_DIR=$(cache_dir "cert-manager-$CERT_MANAGER_VERSION")
readonly OUT_DIR
readonly MODULE_DIR="$TOOLS_DIR/cert-manager"

# The CRDs of the pinned module, concatenated (the module's deploy/crds). They
# come from the module cache, so go.sum's checksum vouches for them.
write_crds() {
  [[ -s "$OUT_DIR/crds.yaml" ]] && return 0
  local dir
  dir=$(cd "$MODULE_DIR" && go mod download -json "$CERT_MANAGER_MODULE@$CERT_MANAGER_VERSION" |
    sed -nE 's/^\s*"Dir": "(.*)",?$/\1/p')
  [[ -d "$dir/deploy/crds" ]] || die "no deploy/crds in $CERT_MANAGER_MODULE@$CERT_MANAGER_VERSION ($dir)"
  local f out="$OUT_DIR/.crds.yaml.tmp.$$"
  : >"$out"
  for f in "$dir"/deploy/crds/*.yaml; do
    cat "$f" >>"$out"
  done
  mv -f "$out" "$OUT_DIR/crds.yaml"
  log "crds: $(grep -c '^kind: CustomResourceDefinition' "$OUT_DIR/crds.yaml") CRDs -> $OUT_DIR/crds.yaml"
}

# The two mains (and what they share) are this repository's code: binaries built from another version
# of them are removed, so that the build below makes them anew.
readonly STAMP="$OUT_DIR/sources.sha256"
if [[ "$(cat "$STAMP" 2>/dev/null)" != "$(sources_sum "$MODULE_DIR")" ]]; then
  rm -f "$STAMP"
  for b in "${BINARIES[@]}"; do rm -f "$OUT_DIR/$b"; done
fi

if has_all_binaries "$OUT_DIR" "${BINARIES[@]}" || lock_out_dir "${BINARIES[@]}"; then
  write_crds
  printf '%s\n' "$OUT_DIR"
  exit 0
fi

check_go "cert-manager $CERT_MANAGER_VERSION"
total_start=$SECONDS
write_crds
ldflags="-s -w -X confighash.local/tools/cert-manager/internal/command.Version=$CERT_MANAGER_VERSION"
build_one cert-manager-controller "$MODULE_DIR" ./controller "$ldflags"
build_one cert-manager-cainjector "$MODULE_DIR" ./cainjector "$ldflags"

has_all_binaries "$OUT_DIR" "${BINARIES[@]}" || die "binaries missing from $OUT_DIR after build"
sources_sum "$MODULE_DIR" >"$STAMP"
if (( ${#TIMINGS[@]} > 0 )); then
  log "build durations: ${TIMINGS[*]} (total $((SECONDS - total_start))s; cert-manager $CERT_MANAGER_VERSION)"
fi
printf '%s\n' "$OUT_DIR"
