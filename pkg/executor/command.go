package executor

import (
	"github.com/spf13/cobra"
)

// Command is the cobra command of an action: its flags (every setting but
// KUBECONFIG_DATA), with the environment variables listed in --help.
func Command(action Action, short, long string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   string(action),
		Short: short,
		Long:  long + "\n\n" + EnvHelp(action) + "\n\n" + exitHelp,
		Args:  cobra.NoArgs,
	}
	o := NewOptions(action, cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return Run(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
	return cmd
}

const exitHelp = `Mounted files: CONFIG_DIR/environment.yaml, CONFIG_DIR/dag.yaml (the spec),
SECRETS_DIR/argocd-token and SECRETS_DIR/argocd-ca.crt (optional).

Exit codes: 0 success, 1 failure, 2 partial (validate: degraded; teardown:
orphans left), 3 invalid configuration or a required primitive missing,
4 timeout.`
