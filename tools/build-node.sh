#!/usr/bin/env bash
# Builds what a local node needs beyond the control plane, from Go modules and
# the project's own C: kubelet and kube-scheduler (the control plane's pinned
# Kubernetes), containerd with its runc shim and ctr, and nsinit (the PID 1 of
# a node run's namespaces). runc and the CNI plugins come from Debian
# (tools/setup-host.sh).
#
#   tools/build-node.sh            -> prints the binaries' directory
#
# Binaries go to ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/node-v1.36.3/ and
# are kept there; progress and timings go to stderr; the only stdout line is
# the directory. Sources are pinned by tools/k8s/go.{mod,sum} and
# tools/containerd/go.{mod,sum}.
set -euo pipefail

readonly K8S_VERSION=v1.36.3
readonly CONTAINERD_VERSION=v2.4.2
readonly BINARIES=(kubelet kube-scheduler containerd containerd-shim-runc-v2 ctr nsinit)

TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
readonly TOOLS_DIR
log() { printf '[build-node] %s\n' "$*" >&2; }
# shellcheck source=lib/go-build.sh
source "$TOOLS_DIR/lib/go-build.sh"

OUT_DIR=$(cache_dir "node-$K8S_VERSION")
readonly OUT_DIR

# nsinit is small and changes with the repository: rebuilt when its source differs.
build_nsinit() {
  local source="$TOOLS_DIR/node/nsinit.c" stamp="$OUT_DIR/nsinit.sha256" sum
  sum=$(sha256sum "$source" | cut -d' ' -f1)
  if [[ -x "$OUT_DIR/nsinit" && "$(cat "$stamp" 2>/dev/null)" == "$sum" ]]; then return 0; fi
  command -v gcc >/dev/null 2>&1 || die "gcc is not on PATH (needed to build nsinit)"
  gcc -O2 -Wall -Werror -o "$OUT_DIR/.nsinit.tmp.$$" "$source"
  mv -f "$OUT_DIR/.nsinit.tmp.$$" "$OUT_DIR/nsinit"
  printf '%s\n' "$sum" >"$stamp"
  log "nsinit: built -> $OUT_DIR/nsinit"
}

if has_all_binaries "$OUT_DIR" "${BINARIES[@]}" || lock_out_dir "${BINARIES[@]}"; then
  build_nsinit
  printf '%s\n' "$OUT_DIR"
  exit 0
fi

check_go "kubelet $K8S_VERSION and containerd $CONTAINERD_VERSION"
total_start=$SECONDS
build_nsinit

ldflags=$(kube_ldflags "$K8S_VERSION" 1 36)
build_one kubelet "$TOOLS_DIR/k8s" k8s.io/kubernetes/cmd/kubelet "$ldflags"
build_one kube-scheduler "$TOOLS_DIR/k8s" k8s.io/kubernetes/cmd/kube-scheduler "$ldflags"

# no_btrfs, no_devmapper: their snapshotters need cgo; the node uses overlayfs.
containerd_tags="no_btrfs no_devmapper"
containerd_ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION"
for cmd in containerd ctr; do
  build_one "$cmd" "$TOOLS_DIR/containerd" "github.com/containerd/containerd/v2/cmd/$cmd" \
    "$containerd_ldflags" "$containerd_tags"
done
build_one containerd-shim-runc-v2 "$TOOLS_DIR/containerd" \
  github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 "$containerd_ldflags" "$containerd_tags" -v

has_all_binaries "$OUT_DIR" "${BINARIES[@]}" || die "binaries missing from $OUT_DIR after build"
if (( ${#TIMINGS[@]} > 0 )); then
  log "build durations: ${TIMINGS[*]} (total $((SECONDS - total_start))s)"
fi
printf '%s\n' "$OUT_DIR"
