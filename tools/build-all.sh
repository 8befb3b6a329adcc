#!/usr/bin/env bash
# Builds every binary CI needs — the control plane, the node, Helm, cert-manager,
# flux-apply, Argo Rollouts, crane, registry, actionlint, krew and Verdaccio (npm ci, no Go) — in two queues that run side by side on two cores.
#
#   tools/build-all.sh   -> nothing on stdout; progress, each build's directory and the
#                           timings on stderr; exit 1 if any build failed
#
# Why two queues: a single `go build` leaves a core idle much of the time (a chain of
# packages that wait on each other, a link), and the other queue fills it. Each build in
# a queue runs with `go build -p 1` while the other queue is still running, so the two
# never ask two cores for more than two compiles; a build that starts alone gets both.
#
# Why this split: the Go build cache shares a compiled package between builds only when
# versions and flags match exactly, and two builds running at once each compile what
# they share. So builds that share much run one after the other in the same queue:
#   A  the control plane, then the node: kubelet and kube-scheduler reuse most of
#      kube-apiserver's and kube-controller-manager's packages (tools/k8s).
#   B  Helm 4, Helm 3, flux-apply (one aligned k8s.io v0.37.2 stack), cert-manager,
#      Argo Rollouts, then crane, registry and actionlint (tools/oci-tools: small, last).
#      containerd, in A's node build, shares that stack too; B has built it long before
#      A gets there.
# The two queues take about as long each from cold (measured one at a time on 2 cores:
# A 687 + 170 s, B 278 + 99 + 226 + 343 s). tools/crds.sh is not a build: the Argo
# Rollouts build runs it, and .ci/run runs it on its own.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

readonly QUEUE_A=(build-control-plane.sh build-node.sh)
readonly QUEUE_B=(build-helm.sh build-flux-apply.sh build-cert-manager.sh build-argo-rollouts.sh build-oci-tools.sh build-verdaccio.sh build-krew.sh)

log() { printf '[build-all] %s\n' "$*" >&2; }

STATE=$(mktemp -d "${TMPDIR:-/tmp}/confighash-build-all.XXXXXX")
readonly STATE
declare -a QUEUE_PIDS=()
stop_queues() {
  local pid
  for pid in "${QUEUE_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap 'rm -rf "$STATE"' EXIT
trap 'log "interrupted"; stop_queues; exit 130' INT TERM

# run_queue NAME OTHER SCRIPT... : runs the scripts in order; stops after a failure in
# either queue (the build under way finishes, none starts).
run_queue() {
  local name=$1 other=$2 script child="" rc=0 start
  shift 2
  trap '[[ -n "$child" ]] && kill -TERM "$child" 2>/dev/null; exit 130' TERM
  for script in "$@"; do
    [[ -e "$STATE/failed" ]] && break
    local jobs=${CONFIGHASH_BUILD_JOBS:-}
    [[ -z "$jobs" && ! -e "$STATE/$other.done" ]] && jobs=1
    log "queue $name: $script${jobs:+ (go build -p $jobs)}"
    start=$SECONDS
    CONFIGHASH_BUILD_JOBS=$jobs bash "./$script" >"$STATE/$script.out" &
    child=$!
    rc=0
    wait "$child" || rc=$?
    child=""
    if ((rc != 0)); then
      log "queue $name: $script FAILED (exit $rc) after $((SECONDS - start))s"
      touch "$STATE/failed"
      break
    fi
    log "queue $name: $script done in $((SECONDS - start))s -> $(cat "$STATE/$script.out")"
    printf '%s=%ss ' "$script" "$((SECONDS - start))" >>"$STATE/$name.timings"
  done
  touch "$STATE/$name.done"
  ((rc == 0))
}

total_start=$SECONDS
run_queue A B "${QUEUE_A[@]}" &
QUEUE_PIDS+=($!)
run_queue B A "${QUEUE_B[@]}" &
QUEUE_PIDS+=($!)

failed=0
for pid in "${QUEUE_PIDS[@]}"; do wait "$pid" || failed=1; done
log "queue A: $(cat "$STATE/A.timings" 2>/dev/null)"
log "queue B: $(cat "$STATE/B.timings" 2>/dev/null)"
if ((failed)) || [[ -e "$STATE/failed" ]]; then
  log "FAILED after $((SECONDS - total_start))s"
  exit 1
fi
log "all built in $((SECONDS - total_start))s"
