#!/usr/bin/env bash
# Runs a command with the image's Node.js (tools/node-runtime.sh) first on PATH, so that it
# and every process it starts run what the image runs: the benches (Node 24 sizes its heap from
# the memory it sees and the Node 20 a developer may have does not, so a figure measured on the
# one does not hold for the other: BENCHMARKS.md, "on the image's Node") and .ci/run's second
# pass of the fast suite.
#   tools/on-image-node.sh COMMAND [ARG ...]
set -euo pipefail
node_bin="$(bash "$(dirname "${BASH_SOURCE[0]}")/node-runtime.sh")"
PATH="$(dirname "$node_bin"):$PATH" exec "$@"
