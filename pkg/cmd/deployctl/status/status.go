// Package status implements `deployctl status`: a run's nodes, live.
package status

import (
	"github.com/spf13/cobra"

	"github.com/deployctl/deployctl/pkg/cmd/deployctl/internal/runflags"
)

// NewCommand returns `deployctl status [WORKFLOW]`.
func NewCommand() *cobra.Command {
	var f *runflags.Flags
	cmd := &cobra.Command{
		Use:   "status [WORKFLOW]",
		Short: "Show each app of a deploy or teardown run (state, duration, what the waiting ones wait for) or of a validate run (health, sync, aggregate)",
		Long: `status reads a run (the named Workflow, else the latest deploy or teardown
run of the platform) and prints every app's state — waiting, starting,
creating, syncing, waiting for health, checking, Healthy (deleting, deleted
for a teardown), failed, omitted — with its duration from the Workflow's
status. For every app that has not started it names the dependencies it waits
for, and for each of those what Argo CD says: sync and health status and
message. Named, a validate run shows what its steps read: each app's
verdict, health and sync status, and the aggregate. Read-only; works on a
finished run too. See also 'deployctl explain'.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			if err := f.CheckOutput(); err != nil {
				return err
			}
			r, err := f.Load(cmd.Context(), name)
			if err != nil {
				return err
			}
			return r.WriteStatus(cmd.OutOrStdout(), f.Output)
		},
	}
	f = runflags.Add(cmd.Flags())
	return cmd
}
