//go:build tools

// The command ../build-helm.sh builds for Helm 3; imported here only so that
// go.mod and go.sum pin everything it needs.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
