// Package plan implements `deployctl plan`: explain the DAG before running it.
package plan

import (
	"github.com/spf13/cobra"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/plan"
)

// NewCommand returns `deployctl plan FILE`.
func NewCommand() *cobra.Command {
	var scope, output, action string
	cmd := &cobra.Command{
		Use:   "plan FILE",
		Short: "Show layers, order, parallelism, critical path and teardown order of a platform",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			act, err := dag.ParseAction(action)
			if err != nil {
				return exitcode.With(exitcode.Invalid, err)
			}
			d, err := dag.Load(args[0])
			if err != nil {
				return exitcode.With(exitcode.Invalid, err)
			}
			if d, err = d.Scope(scope, act); err != nil {
				return exitcode.With(exitcode.Invalid, err)
			}
			p, err := plan.Make(d, scope, act)
			if err != nil {
				return err
			}
			return exitcode.With(exitcode.Invalid, p.Write(cmd.OutOrStdout(), output))
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "platform", "platform, stack:NAME or app:NAME")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text, json, mermaid or dot")
	cmd.Flags().StringVar(&action, "action", "deploy", "deploy or teardown (teardown scopes pull in dependents)")
	return cmd
}
