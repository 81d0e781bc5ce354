//go:build tools

// Package tools pins the Argo Workflows programs build-tools.sh builds, one
// `go build` per major version (their commands share names).
package tools

import (
	_ "github.com/argoproj/argo-workflows/v3/cmd/argo"
	_ "github.com/argoproj/argo-workflows/v3/cmd/argoexec"
	_ "github.com/argoproj/argo-workflows/v3/cmd/workflow-controller"
	_ "github.com/argoproj/argo-workflows/v4/cmd/argo"
	_ "github.com/argoproj/argo-workflows/v4/cmd/argoexec"
	_ "github.com/argoproj/argo-workflows/v4/cmd/workflow-controller"
)
