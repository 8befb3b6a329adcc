#!/usr/bin/env bash
# The CustomResourceDefinitions of the workload kinds confighash handles beyond
# apps/v1 (docs/design.md §7 "Kinds"), as each project ships them in its Go
# module at a pinned version: Argo Rollouts' Rollout, OpenKruise's CloneSet and
# Advanced StatefulSet, plus the four other CRDs of Argo Rollouts whose informers
# its controller waits on (tools/build-argo-rollouts.sh). Nothing is built: `go mod download` fetches the module
# source (checked against the sum pinned here) and the YAML is copied out.
#
#   tools/crds.sh   -> prints the directory holding rollouts.yaml, clonesets.yaml, statefulsets.yaml
#                      and analysisruns.yaml, analysistemplates.yaml, clusteranalysistemplates.yaml, experiments.yaml
#
# Kept in ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/crds-<versions>/; progress goes to stderr.
set -euo pipefail

readonly ARGO_MODULE=github.com/argoproj/argo-rollouts
readonly ARGO_VERSION=v1.8.3
readonly ARGO_SUM='h1:blbtQva4IK9r6gFh+dWkCrLnFdPOWiv9ubQYu36qeaA='
readonly KRUISE_MODULE=github.com/openkruise/kruise
readonly KRUISE_VERSION=v1.8.2
readonly KRUISE_SUM='h1:PbIrZJ3ergs3egQpYB4JyqiUko+m9JveuNX3VNSwNcY='
# Argo Rollouts' manifests/crds file -> the name here (its Rollout CRD is copied on its own, below).
declare -rA ARGO_CONTROLLER_CRDS=(
  [analysis-run-crd.yaml]=analysisruns.yaml
  [analysis-template-crd.yaml]=analysistemplates.yaml
  [cluster-analysis-template-crd.yaml]=clusteranalysistemplates.yaml
  [experiment-crd.yaml]=experiments.yaml
)
readonly FILES=(rollouts.yaml clonesets.yaml statefulsets.yaml "${ARGO_CONTROLLER_CRDS[@]}")

# shellcheck source=lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"

out_dir "crds-argo-rollouts-$ARGO_VERSION-kruise-$KRUISE_VERSION"

# module_dir MODULE VERSION SUM: the module's directory in the Go module cache, after checking its sum.
module_dir() {
  local json dir sum
  json=$(cd "$OUT_DIR" && go mod download -json "$1@$2") || die "go mod download $1@$2 failed: $json"
  dir=$(node -e 'const m = JSON.parse(process.argv[1]); process.stdout.write(m.Dir ?? "")' "$json")
  sum=$(node -e 'const m = JSON.parse(process.argv[1]); process.stdout.write(m.Sum ?? "")' "$json")
  [[ "$sum" == "$3" ]] || die "$1@$2 has sum $sum, pinned $3"
  [[ -d "$dir" ]] || die "$1@$2: no module directory in: $json"
  printf '%s\n' "$dir"
}

# copy_crd SOURCE NAME: into place under a temporary name, so a reader never sees half a file.
copy_crd() {
  [[ -f "$1" ]] || die "no CRD at $1"
  cp "$1" "$OUT_DIR/.$2.tmp.$$"
  chmod 0644 "$OUT_DIR/.$2.tmp.$$"
  mv -f "$OUT_DIR/.$2.tmp.$$" "$OUT_DIR/$2"
}

have_all() {
  local file
  for file in "${FILES[@]}"; do [[ -s "$OUT_DIR/$file" ]] || return 1; done
}

if ! have_all; then
  check_go "the CRDs"
  start=$SECONDS
  argo=$(module_dir "$ARGO_MODULE" "$ARGO_VERSION" "$ARGO_SUM")
  kruise=$(module_dir "$KRUISE_MODULE" "$KRUISE_VERSION" "$KRUISE_SUM")
  copy_crd "$argo/manifests/crds/rollout-crd.yaml" rollouts.yaml
  for source in "${!ARGO_CONTROLLER_CRDS[@]}"; do
    copy_crd "$argo/manifests/crds/$source" "${ARGO_CONTROLLER_CRDS[$source]}"
  done
  copy_crd "$kruise/config/crd/bases/apps.kruise.io_clonesets.yaml" clonesets.yaml
  copy_crd "$kruise/config/crd/bases/apps.kruise.io_statefulsets.yaml" statefulsets.yaml
  log "CRDs of $ARGO_MODULE@$ARGO_VERSION and $KRUISE_MODULE@$KRUISE_VERSION in $((SECONDS - start)) s"
fi
printf '%s\n' "$OUT_DIR"
