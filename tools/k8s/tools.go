//go:build tools

// The commands ../build-control-plane.sh and ../build-node.sh build; imported
// here only so that go.mod and go.sum pin everything they need.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
