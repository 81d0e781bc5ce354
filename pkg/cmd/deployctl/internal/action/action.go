// Package action is the command line of the executor's actions (deploy,
// validate, teardown, preflight): their flags, --help and the typed
// executor.Options they hand to executor.Run.
package action

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/deployctl/deployctl/pkg/executor"
)

// Command is the cobra command of an action: its flags (every setting but
// KUBECONFIG_DATA), with the environment variables listed in --help.
func Command(action executor.Action, short, long string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   string(action),
		Short: short,
		Long:  long + "\n\n" + executor.EnvHelp(action) + "\n\n" + exitHelp,
		Args:  cobra.NoArgs,
	}
	register(action, cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return executor.Run(cmd.Context(), options(action, cmd.Flags()), cmd.OutOrStdout(), cmd.ErrOrStderr())
	}
	return cmd
}

// register adds the action's flags; the environment variable each stands
// for is named in its usage.
func register(action executor.Action, fs *pflag.FlagSet) {
	for _, s := range executor.Flags(action) {
		fs.String(s.Key, s.Default, s.Usage+" ["+s.Env+"]")
		if s.Boolean {
			fs.Lookup(s.Key).NoOptDefVal = "true"
		}
	}
}

// options are the flags given on the command line: only those, so that an
// environment variable wins over a flag's default.
func options(action executor.Action, fs *pflag.FlagSet) *executor.Options {
	o := &executor.Options{Action: action, Flags: map[string]string{}}
	for _, s := range executor.Flags(action) {
		if f := fs.Lookup(s.Key); f != nil && f.Changed {
			o.Flags[s.Key] = f.Value.String()
		}
	}
	return o
}

const exitHelp = `Mounted files: CONFIG_DIR/environment.yaml, CONFIG_DIR/dag.yaml (the spec),
SECRETS_DIR/argocd-token and SECRETS_DIR/argocd-ca.crt (optional).

Exit codes: 0 success, 1 failure, 2 partial (validate: degraded; teardown:
orphans left), 3 invalid configuration or a required primitive missing,
4 timeout.`
