#!/usr/bin/env bash
# The real-node suite (test/node): confighash's image on a kubelet + containerd
# node inside namespaces of the run's own (tools/cluster/node.ts). It needs
# Linux, root, and PID/network/mount namespaces. Where the machine cannot run
# it, this says so plainly and succeeds — except with CI=true, where a skip is
# a failure.
#   tools/test-node.sh [test/node/FILE.test.ts ...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

why_not=""
if [[ "$(uname -s)" != Linux ]]; then
  why_not="it needs Linux (this is $(uname -s))"
elif [[ "$(id -u)" -ne 0 ]]; then
  why_not="it needs root (kubelet, containerd, network namespaces)"
elif ! unshare --pid --fork --net --mount true 2>/dev/null; then
  why_not="this machine refuses new PID, network and mount namespaces (unshare failed)"
fi
if [[ -n "$why_not" ]]; then
  if [[ "${CI:-}" == true ]]; then
    echo "node suite: cannot run: $why_not — with CI=true that is a failure" >&2
    exit 1
  fi
  echo "node suite SKIPPED: $why_not. Everything else ran; run npm run test:node on a Linux machine as root for the rest." >&2
  exit 0
fi

bash tools/setup-host.sh
echo "== node binaries (kubelet, kube-scheduler, containerd)" >&2
bash tools/build-control-plane.sh >/dev/null
bash tools/build-node.sh >/dev/null
echo "== cert-manager (controller, cainjector, CRDs)" >&2
bash tools/build-cert-manager.sh >/dev/null
echo "== Argo Rollouts (controller, CRDs)" >&2
bash tools/build-argo-rollouts.sh >/dev/null
echo "== crane, registry (the release row)" >&2
bash tools/build-oci-tools.sh >/dev/null
echo "== images" >&2
bash tools/image/build.sh >/dev/null
bash tools/image/test-images.sh >/dev/null
# Arguments name test files to run instead of the whole suite; the suite's nodes
# (test/node/global-setup.ts) start either way.
exec npx vitest run --project node "$@"
