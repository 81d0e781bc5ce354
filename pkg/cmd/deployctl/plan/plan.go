// Package plan is the command line of `deployctl plan`: explain the DAG
// before running it. The work is pkg/plan's (Command.Run).
package plan

import (
	"github.com/spf13/cobra"

	"github.com/deployctl/deployctl/pkg/cmd/deployctl/internal/inventoryflags"
	"github.com/deployctl/deployctl/pkg/plan"
)

// NewCommand returns `deployctl plan FILE`.
func NewCommand() *cobra.Command {
	var c plan.Command
	cmd := &cobra.Command{
		Use:   "plan FILE",
		Short: "Show layers, order, parallelism, critical path and teardown order of a platform",
		Long: `plan explains the DAG before anything runs: layers, order, parallelism, the
critical path with the health timeouts as worst case, and the teardown order.

--compare-waves compares the deploy time under Argo CD sync-wave ordering
(every wave waits for the slowest app of the wave before it; apps of an
app-of-apps in waves inside their parent) with the DAG's critical path, using
the same durations: the spec's health timeouts, or the measured durations of
a previous deploy (--durations, the executor's report). The waves come from
the apps' annotations (deployctl.dev/sync-wave and deployctl.dev/sync-wave-path,
written by 'deployctl import', or argocd.argoproj.io/sync-wave), or from
--waves FILE, a YAML map of app to wave. With --manifests DIR the DAG is the
one the apps' resources show (every dependsOn replaced by them): the real
ratio between the waves and the dependencies, before anyone edits the spec.

--live reads the same from the Argo CD API instead of a folder: each app's
managed resources, with deploystep's connection settings (--server,
--token-file, --ca-file, --root-path, --plaintext, --insecure-skip-verify, or
their ARGOCD_* variables); a failed read exits 1.

--explain-edges --manifests DIR holds every dependsOn entry against what the
apps deploy, DIR/<app>/*.yaml (README: "Dependencies from resources"): a
dependency a resource shows that no entry orders, not even through others,
is an error (the deploy may start the consumer before, say, its CRD exists)
and the command exits 3 after the report; an entry no resource needs is
information (a wave order, or configuration no rule reads); entries with an
app without a folder are not checked. -o text or json.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c.File = args[0]
			return c.Run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&c.Scope, "scope", "platform", "platform, stack:NAME or app:NAME")
	cmd.Flags().StringVarP(&c.Output, "output", "o", "text", "text, json, mermaid or dot (--compare-waves: text or json)")
	cmd.Flags().StringVar(&c.Action, "action", "deploy", "deploy or teardown (teardown scopes pull in dependents)")
	cmd.Flags().BoolVar(&c.CompareWaves, "compare-waves", false, "compare the deploy time under sync waves with the DAG's")
	cmd.Flags().StringVar(&c.WavesFile, "waves", "", "YAML map app: wave, instead of the apps' wave annotations")
	cmd.Flags().StringVar(&c.DurationsFile, "durations", "", "a deploy's executor report (JSON): use its measured app durations")
	cmd.Flags().BoolVar(&c.ExplainEdges, "explain-edges", false, "hold every dependsOn against what the apps deploy (--manifests): missing ones are errors")
	inventoryflags.Register(cmd.Flags(), &c.Inventory, "folder of rendered manifests, DIR/<app>/*.yaml (--explain-edges; --compare-waves: the DAG from the resources)",
		"instead of --manifests: what the Applications deploy, read from the Argo CD API (read-only)")
	return cmd
}
