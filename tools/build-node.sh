#!/usr/bin/env bash
# Builds what a local node needs beyond the control plane, from Go modules and
# the project's own C: kubelet and kube-scheduler (the control plane's pinned
# Kubernetes), containerd with its runc shim and ctr, and nsinit (the PID 1 of
# a node run's namespaces). runc and the CNI plugins come from Debian
# (tools/setup-host.sh).
#
#   tools/build-node.sh [--find]   -> prints the binaries' directory
#
# Binaries go to ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/node-v1.36.3/ and are
# kept there while current; tools/lib/go-build.sh is the skeleton (stamp, lock,
# output). Sources are pinned by tools/k8s/go.{mod,sum} and
# tools/containerd/go.{mod,sum}.
set -euo pipefail
# shellcheck source=lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"

readonly K8S_VERSION=v1.36.3
readonly CONTAINERD_VERSION=v2.4.2

pinned "$TOOLS_DIR/k8s" k8s.io/kubernetes "$K8S_VERSION"
pinned "$TOOLS_DIR/containerd" github.com/containerd/containerd/v2 "$CONTAINERD_VERSION"
out_dir "node-$K8S_VERSION"

c_binary nsinit "$TOOLS_DIR/node/nsinit.c" "-O2 -Wall -Werror"

ldflags=$(kube_ldflags "$K8S_VERSION" 1 36)
go_binary kubelet "$TOOLS_DIR/k8s" k8s.io/kubernetes/cmd/kubelet "$ldflags"
go_binary kube-scheduler "$TOOLS_DIR/k8s" k8s.io/kubernetes/cmd/kube-scheduler "$ldflags"

# no_btrfs, no_devmapper: their snapshotters need cgo; the node uses overlayfs.
containerd_tags="no_btrfs no_devmapper"
containerd_ldflags="-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION"
for cmd in containerd ctr containerd-shim-runc-v2; do
  # The shim has no --version, only -v.
  version_arg=--version
  [[ $cmd == containerd-shim-runc-v2 ]] && version_arg=-v
  go_binary "$cmd" "$TOOLS_DIR/containerd" "github.com/containerd/containerd/v2/cmd/$cmd" \
    "$containerd_ldflags" "$containerd_tags" "$version_arg"
done

build_declared "$@"
