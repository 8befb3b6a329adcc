#!/usr/bin/env bash
# Builds Helm 3 and Helm 4 from Go modules (no binary downloads), for the chart's
# lint/template tests and the Helm rows of the e2e and node suites.
#
#   tools/build-helm.sh            -> prints the directory holding helm3 and helm4
#   tools/build-helm.sh --find     -> the same when both are built and current; else exit 1,
#                                     building nothing
#
# Binaries go to ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/helm-v3.22.0-v4.3.2/ and are
# kept there while current; tools/lib/go-build.sh is the skeleton (stamp, lock, output).
# Sources are pinned by tools/helm3/go.{mod,sum} and tools/helm4/go.{mod,sum}.
set -euo pipefail
# shellcheck source=lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"

readonly HELM3_VERSION=v3.22.0
readonly HELM4_VERSION=v4.3.2

pinned "$TOOLS_DIR/helm3" helm.sh/helm/v3 "$HELM3_VERSION"
pinned "$TOOLS_DIR/helm4" helm.sh/helm/v4 "$HELM4_VERSION"
out_dir "helm-$HELM3_VERSION-$HELM4_VERSION"

# helm_ldflags MAJOR VERSION : the stamps of Helm's own Makefile.
helm_ldflags() {
  printf '%s' "-s -w -X helm.sh/helm/v$1/internal/version.version=$2 -X helm.sh/helm/v$1/internal/version.gitTreeState=clean"
}

# Helm 3 reports its Kubernetes version (.Capabilities.KubeVersion, lint's deprecation
# checks) from these stamps, which its Makefile derives from client-go (v0.37 → 1.37);
# without them it says 1.20. Helm 4 derives it at run time.
helm3_kube="-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=37"
helm3_kube+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37"

# Helm 4 first: Helm 3's module is aligned with it, so Helm 3 then mostly links.
go_binary helm4 "$TOOLS_DIR/helm4" helm.sh/helm/v4/cmd/helm "$(helm_ldflags 4 "$HELM4_VERSION")" "" version
go_binary helm3 "$TOOLS_DIR/helm3" helm.sh/helm/v3/cmd/helm "$(helm_ldflags 3 "$HELM3_VERSION") $helm3_kube" "" version

build_declared "$@"
