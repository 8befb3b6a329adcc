//go:build tools

// The commands ../build-node.sh builds; imported here only so that go.mod and
// go.sum pin everything they need.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
