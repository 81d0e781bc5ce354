// Package deployctl is the root of the deployctl command tree; each verb
// lives in its own package and exports NewCommand.
package deployctl

import (
	"github.com/spf13/cobra"

	"github.com/deployctl/deployctl/pkg/cmd/deployctl/deploy"
	"github.com/deployctl/deployctl/pkg/cmd/deployctl/explain"
	"github.com/deployctl/deployctl/pkg/cmd/deployctl/generate"
	"github.com/deployctl/deployctl/pkg/cmd/deployctl/importcmd"
	"github.com/deployctl/deployctl/pkg/cmd/deployctl/lint"
	"github.com/deployctl/deployctl/pkg/cmd/deployctl/plan"
	"github.com/deployctl/deployctl/pkg/cmd/deployctl/preflight"
	"github.com/deployctl/deployctl/pkg/cmd/deployctl/status"
	"github.com/deployctl/deployctl/pkg/cmd/deployctl/teardown"
	"github.com/deployctl/deployctl/pkg/cmd/deployctl/validate"
)

// NewCommand returns the deployctl root command.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "deployctl",
		Short: "Deploy a platform of Argo CD Applications in dependency order, health-gated, with Argo Workflows",
		Long: `deployctl compiles a platform DAG spec into Argo Workflows manifests that
deploy, validate and tear down the platform in dependency order: every app
starts only when the apps it depends on are Healthy, and teardown runs in
reverse. Argo Workflows is the runtime; Argo CD applies every manifest.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.AddCommand(lint.NewCommand(), plan.NewCommand(), generate.NewCommand(),
		preflight.NewCommand(), deploy.NewCommand(), validate.NewCommand(), teardown.NewCommand())
	cmd.AddCommand(importcmd.NewCommand(), status.NewCommand(), explain.NewCommand())
	wireUsageErrors(cmd)
	return cmd
}
