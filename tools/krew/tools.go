//go:build tools

// The command tools/build-krew.sh builds, imported so that go.mod pins it.
package tools

import (
	_ "sigs.k8s.io/krew/cmd/krew"
)
