// Command argocd is a multi-call Argo CD binary holding only the three
// components the e2e harness runs as host processes: argocd-server,
// argocd-repo-server and argocd-application-controller, chosen by the name it
// is invoked as (symlinks) or by ARGOCD_BINARY_NAME. Upstream's cmd package is
// not imported: it links the CLI, whose dependencies the module proxy refuses.
// Built by two modules (Argo CD v3.0 and v3.6): it uses only what both have.
// (Upstream's main calls cmd/util.SetAutoMaxProcs on 3.0, gone in 3.6: Go's
// runtime sizes GOMAXPROCS by the cgroup quota since 1.25, and these host
// processes have none.)
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	appcontroller "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	reposerver "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
	apiserver "github.com/argoproj/argo-cd/v3/cmd/argocd-server/commands"
	"github.com/argoproj/argo-cd/v3/util/log"
)

func init() { klog.SetLogger(log.NewLogrusLogger(log.NewWithCurrentConfig())) }

func main() {
	name := filepath.Base(os.Args[0])
	if v := os.Getenv("ARGOCD_BINARY_NAME"); v != "" {
		name = v
	}
	var command *cobra.Command
	switch name {
	case "argocd-server":
		command = apiserver.NewCommand()
	case "argocd-application-controller":
		command = appcontroller.NewCommand()
	case "argocd-repo-server":
		command = reposerver.NewCommand()
	default:
		fmt.Fprintf(os.Stderr, "argocd: invoke as argocd-server, argocd-repo-server or argocd-application-controller (got %q)\n", name)
		os.Exit(2)
	}
	if err := command.Execute(); err != nil {
		os.Exit(1)
	}
}
