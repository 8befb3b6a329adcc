//go:build tools

// The command ../build-helm.sh builds for Helm 4; imported here only so that
// go.mod and go.sum pin everything it needs.
package tools

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
