//go:build tools

// The commands tools/build-oci-tools.sh builds, imported so that go.mod pins them.
package tools

import (
	_ "github.com/google/go-containerregistry/cmd/crane"
	_ "github.com/google/go-containerregistry/cmd/registry"
	_ "github.com/rhysd/actionlint/cmd/actionlint"
)
