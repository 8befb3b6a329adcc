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
die() { log "ERROR: $*"; exit 1; }

has_all_binaries() {
  local dir=$1 b
  for b in "${BINARIES[@]}"; do
    [[ -f "$dir/$b" && -x "$dir/$b" ]] || return 1
  done
}

# --- 1. Pre-provisioned binaries -------------------------------------------
if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  if [[ -d "$KUBEBUILDER_ASSETS" ]] && has_all_binaries "$KUBEBUILDER_ASSETS"; then
    log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
    (cd "$KUBEBUILDER_ASSETS" && pwd -P)
    exit 0
  fi
  log "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS lacks one of: ${BINARIES[*]}; building from source instead"
fi

# --- 2. Build from source into the cache -----------------------------------
CACHE_ROOT=${XDG_CACHE_HOME:-}
[[ -n "$CACHE_ROOT" ]] || CACHE_ROOT="${HOME:?HOME is not set}/.cache"
mkdir -p "$CACHE_ROOT/confighash/k8s-$K8S_VERSION"
OUT_DIR=$(cd "$CACHE_ROOT/confighash/k8s-$K8S_VERSION" && pwd -P)
readonly OUT_DIR

if has_all_binaries "$OUT_DIR"; then
  log "all binaries present in $OUT_DIR"
  printf '%s\n' "$OUT_DIR"
  exit 0
fi

# Serialise concurrent callers (e.g. parallel test workers) on one build.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$OUT_DIR/.lock"
  if ! flock -n 9; then
    log "another build is running in $OUT_DIR; waiting for it"
    flock 9
  fi
  if has_all_binaries "$OUT_DIR"; then
    log "all binaries present in $OUT_DIR"
    printf '%s\n' "$OUT_DIR"
    exit 0
  fi
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH (Go >= 1.26 is needed to build the control plane)"
go_minor=$(go env GOVERSION | sed -nE 's/^go1\.([0-9]+).*/\1/p')
if [[ -z "$go_minor" || "$go_minor" -lt 26 ]]; then
  # k8s.io/kubernetes v1.36 declares `go 1.26.0`; with GOTOOLCHAIN=local an
  # older go refuses to build it.
  log "warning: $(go env GOVERSION) found; k8s.io/kubernetes $K8S_VERSION needs go >= 1.26"
fi

# Builds are static, reproducible and use exactly the committed go.sum files.
export CGO_ENABLED=0
export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"

CURRENT_TMP=""
CURRENT_PID=""
cleanup() {
  if [[ -n "$CURRENT_PID" ]]; then kill "$CURRENT_PID" 2>/dev/null || true; wait "$CURRENT_PID" 2>/dev/null || true; fi
  if [[ -n "$CURRENT_TMP" ]]; then rm -f "$CURRENT_TMP"; fi
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

declare -a TIMINGS=()

# build_one NAME MODULE_DIR PACKAGE LDFLAGS
build_one() {
  local name=$1 moddir=$2 pkg=$3 ldflags=$4
  local dest="$OUT_DIR/$name"
  if [[ -f "$dest" && -x "$dest" ]]; then
    log "$name: already built ($dest), skipping"
    return 0
  fi

  CURRENT_TMP="$OUT_DIR/.$name.tmp.$$"
  rm -f "$CURRENT_TMP"
  log "$name: building $pkg (module dir ${moddir#"$TOOLS_DIR"/}) ..."
  local start=$SECONDS last_report=$SECONDS
  (cd "$moddir" && exec go build -trimpath -ldflags "$ldflags" -o "$CURRENT_TMP" "$pkg") &
  CURRENT_PID=$!
  while kill -0 "$CURRENT_PID" 2>/dev/null; do
    sleep 1
    if (( SECONDS - last_report >= 30 )); then
      last_report=$SECONDS
      log "$name: still building, $((SECONDS - start))s elapsed"
    fi
  done
  local rc=0
  wait "$CURRENT_PID" || rc=$?
  CURRENT_PID=""
  local elapsed=$((SECONDS - start))
  (( rc == 0 )) || die "$name: go build failed (exit $rc) after ${elapsed}s"
  [[ -s "$CURRENT_TMP" ]] || die "$name: go build produced no binary"

  local version_out
  version_out=$("$CURRENT_TMP" --version 2>&1) || die "$name: built binary does not run: $version_out"
  version_out=${version_out%%$'\n'*}
  chmod 0755 "$CURRENT_TMP"
  mv -f "$CURRENT_TMP" "$dest"
  CURRENT_TMP=""
  local size
  size=$(du -h "$dest" | cut -f1)
  log "$name: built in ${elapsed}s ($size) -> $dest [$version_out]"
  TIMINGS+=("$name=${elapsed}s")
}

total_start=$SECONDS

build_one etcd "$TOOLS_DIR/etcd" . "-s -w"

kube_ldflags="-s -w"
for pkgpath in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X '$pkgpath.gitVersion=$K8S_VERSION'"
  kube_ldflags+=" -X '$pkgpath.gitMajor=$K8S_MAJOR'"
  kube_ldflags+=" -X '$pkgpath.gitMinor=$K8S_MINOR'"
  kube_ldflags+=" -X '$pkgpath.gitTreeState=clean'"
done

build_one kube-apiserver "$TOOLS_DIR/k8s" k8s.io/kubernetes/cmd/kube-apiserver "$kube_ldflags"
build_one kube-controller-manager "$TOOLS_DIR/k8s" k8s.io/kubernetes/cmd/kube-controller-manager "$kube_ldflags"

has_all_binaries "$OUT_DIR" || die "binaries missing from $OUT_DIR after build"
if (( ${#TIMINGS[@]} > 0 )); then
  log "build durations: ${TIMINGS[*]} (total $((SECONDS - total_start))s; etcd $ETCD_VERSION, kubernetes $K8S_VERSION)"
fi
printf '%s\n' "$OUT_DIR"
