#!/usr/bin/env bash
# Builds Helm 3 and Helm 4 from Go modules (no binary downloads), for the chart's
# lint/template tests and the Helm rows of the e2e and node suites.
#
#   tools/build-helm.sh            -> prints two lines: the Helm 3 and the Helm 4 binary
#   tools/build-helm.sh --find     -> the same when both are built; else exit 1, building nothing
#
# Binaries go to ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/helm-<version>/helm and
# are kept there; progress and timings go to stderr. Sources are pinned by
# tools/helm3/go.{mod,sum} and tools/helm4/go.{mod,sum}.
set -euo pipefail

readonly HELM3_VERSION=v3.22.0
readonly HELM4_VERSION=v4.3.2

TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
readonly TOOLS_DIR
log() { printf '[build-helm] %s\n' "$*" >&2; }
# shellcheck source=lib/go-build.sh
source "$TOOLS_DIR/lib/go-build.sh"

if [[ "${1:-}" == --find ]]; then
  for version in "$HELM3_VERSION" "$HELM4_VERSION"; do
    OUT_DIR=$(cache_dir "helm-$version")
    has_all_binaries "$OUT_DIR" helm || exit 1
    printf '%s\n' "$OUT_DIR/helm"
  done
  exit 0
fi

# build_helm MAJOR VERSION EXTRA_LDFLAGS : prints the binary's path.
build_helm() {
  local major=$1 version=$2 extra=$3
  OUT_DIR=$(cache_dir "helm-$version")
  if ! has_all_binaries "$OUT_DIR" helm && ! lock_out_dir helm; then
    check_go "helm $version"
    local ldflags="-s -w -X helm.sh/helm/v$major/internal/version.version=$version"
    ldflags+=" -X helm.sh/helm/v$major/internal/version.gitTreeState=clean $extra"
    build_one helm "$TOOLS_DIR/helm$major" "helm.sh/helm/v$major/cmd/helm" "$ldflags" "" version
  fi
  printf '%s\n' "$OUT_DIR/helm"
}

# Helm 3 reports its Kubernetes version (.Capabilities.KubeVersion, lint's deprecation
# checks) from these stamps, which its Makefile derives from client-go (v0.37 → 1.37);
# without them it says 1.20. Helm 4 derives it at run time.
helm3_kube="-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=37"
helm3_kube+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37"

total_start=$SECONDS
build_helm 3 "$HELM3_VERSION" "$helm3_kube"
build_helm 4 "$HELM4_VERSION" ""
if (( ${#TIMINGS[@]} > 0 )); then
  log "build durations: ${TIMINGS[*]} (total $((SECONDS - total_start))s)"
fi
