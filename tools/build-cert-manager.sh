#!/usr/bin/env bash
# Builds cert-manager's controller and cainjector from Go modules (the library
# packages of github.com/cert-manager/cert-manager; tools/cert-manager holds the
# two small mains, see its go.mod for why) and puts cert-manager's CRDs, from the
# same module version, beside them.
#
#   tools/build-cert-manager.sh [--find]   -> prints the directory of the binaries and crds.yaml
#
# They go to ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/cert-manager-v1.21.2/ and are
# kept there while current; tools/lib/go-build.sh is the skeleton (stamp, lock, output).
# Sources are pinned by tools/cert-manager/go.{mod,sum}.
set -euo pipefail
# shellcheck source=lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"

readonly CERT_MANAGER_VERSION=v1.21.2
readonly CERT_MANAGER_MODULE=github.com/cert-manager/cert-manager
readonly MODULE_DIR="$TOOLS_DIR/cert-manager"

pinned "$MODULE_DIR" "$CERT_MANAGER_MODULE" "$CERT_MANAGER_VERSION"
out_dir "cert-manager-$CERT_MANAGER_VERSION"

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

ldflags="-s -w -X confighash.local/tools/cert-manager/internal/command.Version=$CERT_MANAGER_VERSION"
go_binary cert-manager-controller "$MODULE_DIR" ./controller "$ldflags"
go_binary cert-manager-cainjector "$MODULE_DIR" ./cainjector "$ldflags"

if [[ "${1:-}" == --find ]]; then
  [[ -s "$OUT_DIR/crds.yaml" ]] || exit 1
else
  write_crds
fi
build_declared "$@"
