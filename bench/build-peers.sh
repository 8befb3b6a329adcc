#!/usr/bin/env bash
# Builds the peers of `npm run bench -- --peers` (issue 14): wave's manager and
# Reloader, from source directories you bring (the Go module proxy serves their
# dependencies but not wave or Reloader themselves):
#
#   WAVE_SRC=/path/to/wave RELOADER_SRC=/path/to/Reloader bench/build-peers.sh
#
# WAVE_SRC     a checkout of github.com/wave-k8s/wave at tag wave-4.5.0
# RELOADER_SRC a checkout of github.com/stakater/Reloader at tag v1.4.21
#
# Each peer whose source is set is built (the `scale` scenario needs Reloader only),
# at least one. Binaries go to ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/{wave-4.5.0,
# reloader-v1.4.21}/ and are kept; the only stdout lines are `wave=PATH` and `reloader=PATH`.
# The source directories are never modified: Reloader is built from a copy,
# because its pinned github.com/openshift/api version is refused by the module
# proxy and is replaced (with GONOSUMDB for that module, whose replacement is
# then not in the checksum database's go.sum lines).
set -euo pipefail

readonly WAVE_VERSION=wave-4.5.0
readonly RELOADER_VERSION=v1.4.21
readonly OPENSHIFT_API_REPLACEMENT=v0.0.0-20260109135506-3920bba77f16

# shellcheck source=../tools/lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/../tools/lib/go-build.sh"

[[ -n "${WAVE_SRC:-}" || -n "${RELOADER_SRC:-}" ]] ||
  die "set WAVE_SRC to a checkout of github.com/wave-k8s/wave at $WAVE_VERSION and/or RELOADER_SRC to one of github.com/stakater/Reloader at $RELOADER_VERSION (fetch them; the module proxy does not serve them)"
if [[ -n "${WAVE_SRC:-}" ]]; then
  [[ -f "${WAVE_SRC}/go.mod" ]] || die "WAVE_SRC=$WAVE_SRC has no go.mod"
  grep -q '^module github.com/wave-k8s/wave$' "$WAVE_SRC/go.mod" || die "$WAVE_SRC is not wave"
fi
if [[ -n "${RELOADER_SRC:-}" ]]; then
  [[ -f "${RELOADER_SRC}/go.mod" ]] || die "RELOADER_SRC=$RELOADER_SRC has no go.mod"
  grep -q '^module github.com/stakater/Reloader$' "$RELOADER_SRC/go.mod" || die "$RELOADER_SRC is not Reloader"
fi

# Each peer is one skeleton build (tools/lib/go-build.sh: stamp, lock, its directory on
# stdout) in a subshell of its own, since a build has one output directory.

# --- wave: its committed go.sum, as is ------------------------------------------
build_wave() {
  out_dir "$WAVE_VERSION"
  go_binary wave "$WAVE_SRC" ./cmd/manager "-s -w"
  build_declared
}

# --- Reloader: a copy with github.com/openshift/api replaced --------------------
build_reloader() {
  copy=$(mktemp -d)
  trap 'rm -rf "$copy"; cleanup' EXIT
  cp -a "$RELOADER_SRC/." "$copy/"
  (cd "$copy" && go mod edit -replace "github.com/openshift/api=github.com/openshift/api@$OPENSHIFT_API_REPLACEMENT")
  export GONOSUMDB=github.com/openshift/api
  # go.sum gains the replacement's lines: the one place the build may write it.
  export GOFLAGS="-mod=mod -buildvcs=false"
  # Reloader makes its Kubernetes client while its packages initialise, before it
  # parses --help: the check that the binary runs needs a kubeconfig (never dialled).
  printf '%s\n' 'apiVersion: v1' 'kind: Config' 'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]' \
    'users: [{name: u, user: {}}]' 'contexts: [{name: c, context: {cluster: c, user: u}}]' 'current-context: c' \
    >"$copy/check.kubeconfig"
  export KUBECONFIG="$copy/check.kubeconfig"
  out_dir "reloader-$RELOADER_VERSION"
  go_binary reloader "$copy" . "-s -w" "" --help
  build_declared
}

if [[ -n "${WAVE_SRC:-}" ]]; then
  wave_dir=$(build_wave)
  printf 'wave=%s\n' "$wave_dir/wave"
fi
if [[ -n "${RELOADER_SRC:-}" ]]; then
  reloader_dir=$(build_reloader)
  printf 'reloader=%s\n' "$reloader_dir/reloader"
fi
