// Package explain implements `deployctl explain APP`: why an app is not
// deploying (or not deleted), in one screen.
package explain

import (
	"github.com/spf13/cobra"

	"github.com/deployctl/deployctl/pkg/cmd/deployctl/internal/runflags"
	"github.com/deployctl/deployctl/pkg/exitcode"
)

// NewCommand returns `deployctl explain APP`.
func NewCommand() *cobra.Command {
	var f *runflags.Flags
	var workflow string
	cmd := &cobra.Command{
		Use:   "explain APP",
		Short: "Explain why an app is not deploying (or not deleted) in a run",
		Long: `explain answers "why is APP not deploying?" (or, in a teardown, "not
deleted?") for a run — the --workflow named, else the latest deploy or
teardown run of the platform: its state and duration, what Argo CD says of
it, the dependencies it waits for and, at the end of each chain of waiting
apps, the one that holds it back (running, failed, or ready to start) with
Argo CD's sync and health status and message. For a finished run: why it
failed, and what was not run because of it; for an omitted app, which failed
dependency it was omitted for. Read-only.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.CheckOutput(); err != nil {
				return err
			}
			r, err := f.Load(cmd.Context(), workflow)
			if err != nil {
				return err
			}
			e, err := r.Explain(args[0])
			if err != nil {
				return exitcode.With(exitcode.Invalid, err)
			}
			return e.Write(cmd.OutOrStdout(), r, f.Output)
		},
	}
	f = runflags.Add(cmd.Flags())
	cmd.Flags().StringVarP(&workflow, "workflow", "w", "", "the run (default the latest deploy or teardown run)")
	return cmd
}
