#!/usr/bin/env bash
# Builds a local Kubernetes control plane (etcd, kube-apiserver,
# kube-controller-manager) from Go modules: no docker, no binary downloads.
#
#   tools/build-control-plane.sh [--find]   -> prints the binaries' directory
#
# If KUBEBUILDER_ASSETS names a directory holding all three binaries, it is used as
# is and nothing is built. Otherwise the binaries are built into
# ${XDG_CACHE_HOME:-$HOME/.cache}/confighash/k8s-v1.36.3/ and kept there while
# current; tools/lib/go-build.sh is the skeleton (stamp, lock, output).
#
# Sources are pinned by tools/etcd/go.{mod,sum} and tools/k8s/go.{mod,sum}.
# A cold build (empty Go module and build caches) takes a long time on 2 cores;
# later runs are instant.
set -euo pipefail
# shellcheck source=lib/go-build.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"

readonly K8S_VERSION=v1.36.3
readonly ETCD_VERSION=v3.6.13

pinned "$TOOLS_DIR/k8s" k8s.io/kubernetes "$K8S_VERSION"
pinned "$TOOLS_DIR/etcd" go.etcd.io/etcd/server/v3 "$ETCD_VERSION"
out_dir "k8s-$K8S_VERSION"

go_binary etcd "$TOOLS_DIR/etcd" . "-s -w"
# One `go build` for both: they share most of Kubernetes' packages.
ldflags=$(kube_ldflags "$K8S_VERSION" 1 36)
go_binary kube-apiserver "$TOOLS_DIR/k8s" k8s.io/kubernetes/cmd/kube-apiserver "$ldflags"
go_binary kube-controller-manager "$TOOLS_DIR/k8s" k8s.io/kubernetes/cmd/kube-controller-manager "$ldflags"

use_prebuilt KUBEBUILDER_ASSETS
build_declared "$@"
