//go:build tools

// Package tools lists what cmd/argocd (a symlink, which `go mod tidy` does not
// follow) imports, so tidy keeps their requirements.
package tools

import (
	_ "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	_ "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
	_ "github.com/argoproj/argo-cd/v3/cmd/argocd-server/commands"
	_ "github.com/argoproj/argo-cd/v3/util/log"
	_ "github.com/spf13/cobra"
	_ "k8s.io/klog/v2"
)
