#!/usr/bin/env bash
# Builds a local Kubernetes control plane (etcd, kube-apiserver,
# kube-controller-manager) from Go modules: no docker, no binary downloads.
#
#   tools/build-control-plane.sh            -> prints the binaries' directory
#
# - If KUBEBUILDER_ASSETS is set and holds all three binaries, that directory is
#   used as is (nothing is built).
# - Otherwise the binaries are built into
#   ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/k8s-v1.36.3/ ; binaries already
#   there are kept. Each one is written under a temporary name and renamed when
#   complete, so an interrupted build never leaves a half-written binary.
# - Progress and timings go to stderr; the only stdout line is the absolute
#   directory holding the binaries.
#
# Sources are pinned by tools/etcd/go.{mod,sum} and tools/k8s/go.{mod,sum}.
# A cold build (empty Go module and build caches) takes a long time on 2 cores;
# later runs are instant.
set -euo pipefail

readonly K8S_VERSION=v1.36.3
readonly K8S_MAJOR=1
readonly K8S_MINOR=36
readonly ETCD_VERSION=v3.6.13
readonly BINARIES=(etcd kube-apiserver kube-controller-manager)

TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
readonly TOOLS_DIR
log() { printf '[build-control-plane] %s\n' "$*" >&2; }
# shellcheck source=lib/go-build.sh
source "$TOOLS_DIR/lib/go-build.sh"

# --- 1. Pre-provisioned binaries -------------------------------------------
if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  if [[ -d "$KUBEBUILDER_ASSETS" ]] && has_all_binaries "$KUBEBUILDER_ASSETS" "${BINARIES[@]}"; then
    log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
    (cd "$KUBEBUILDER_ASSETS" && pwd -P)
    exit 0
  fi
  log "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS lacks one of: ${BINARIES[*]}; building from source instead"
fi

# --- 2. Build from source into the cache -----------------------------------
OUT_DIR=$(cache_dir "k8s-$K8S_VERSION")
readonly OUT_DIR

if has_all_binaries "$OUT_DIR" "${BINARIES[@]}" || lock_out_dir "${BINARIES[@]}"; then
  log "all binaries present in $OUT_DIR"
  printf '%s\n' "$OUT_DIR"
  exit 0
fi

check_go "kubernetes $K8S_VERSION"
total_start=$SECONDS

build_one etcd "$TOOLS_DIR/etcd" . "-s -w"
ldflags=$(kube_ldflags "$K8S_VERSION" "$K8S_MAJOR" "$K8S_MINOR")
build_one kube-apiserver "$TOOLS_DIR/k8s" k8s.io/kubernetes/cmd/kube-apiserver "$ldflags"
build_one kube-controller-manager "$TOOLS_DIR/k8s" k8s.io/kubernetes/cmd/kube-controller-manager "$ldflags"

has_all_binaries "$OUT_DIR" "${BINARIES[@]}" || die "binaries missing from $OUT_DIR after build"
if (( ${#TIMINGS[@]} > 0 )); then
  log "build durations: ${TIMINGS[*]} (total $((SECONDS - total_start))s; etcd $ETCD_VERSION, kubernetes $K8S_VERSION)"
fi
printf '%s\n' "$OUT_DIR"
