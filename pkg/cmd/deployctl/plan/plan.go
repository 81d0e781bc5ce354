// Package plan implements `deployctl plan`: explain the DAG before running it.
package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/safeyaml"
	"github.com/deployctl/deployctl/pkg/cmd/deployctl/internal/inventoryflags"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/deps"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/importer/argorules/syncwave"
	"github.com/deployctl/deployctl/pkg/plan"
	execreport "github.com/deployctl/deployctl/pkg/report"
)

// NewCommand returns `deployctl plan FILE`.
func NewCommand() *cobra.Command {
	var scope, output, action, wavesFile, durationsFile string
	var compareWaves, explainEdges bool
	var invFlags *deps.SourceConfig
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
			act, err := dag.ParseAction(action)
			if err != nil {
				return exitcode.With(exitcode.Invalid, err)
			}
			var problems []error
			if !compareWaves && (wavesFile != "" || durationsFile != "") {
				problems = append(problems, errors.New("--waves and --durations go with --compare-waves"))
			}
			switch {
			case explainEdges && !invFlags.Given():
				problems = append(problems, errors.New("--explain-edges needs --manifests DIR (the rendered manifests of the apps) or --live"))
			case explainEdges && compareWaves:
				problems = append(problems, errors.New("--explain-edges and --compare-waves are two reports: run them one at a time"))
			case explainEdges && scope != "platform":
				problems = append(problems, errors.New("--explain-edges checks the whole platform: leave out --scope"))
			case invFlags.Given() && !explainEdges && !compareWaves:
				problems = append(problems, errors.New("--manifests and --live go with --explain-edges or --compare-waves"))
			}
			src, err := invFlags.Open()
			if err != nil {
				problems = append(problems, err)
			}
			d, err := dag.Load(args[0])
			if err != nil {
				problems = append(problems, err)
			}
			if len(problems) > 0 {
				return exitcode.With(exitcode.Invalid, errors.Join(problems...))
			}
			var inventory []deps.App
			var noInventory []string
			if src != nil {
				if inventory, err = src.Inventory(cmd.Context(), plan.AppRefs(d)); err != nil {
					return exitcode.With(exitcode.Failure, err)
				}
				if inventory, noInventory, err = plan.InventoryApps(d, src.Name, inventory); err != nil {
					return exitcode.With(exitcode.Invalid, err)
				}
			}
			if explainEdges {
				r := plan.ExplainEdges(d, src.Name, inventory, noInventory)
				if err := r.Write(cmd.OutOrStdout(), output); err != nil {
					return exitcode.With(exitcode.Invalid, err)
				}
				if n := len(r.Missing); n > 0 {
					return exitcode.With(exitcode.Invalid, fmt.Errorf("%d missing %s: a consumer may start before what it needs (above)", n, plural(n, "dependency", "dependencies")))
				}
				return nil
			}
			if src != nil {
				if d, err = plan.EvidenceDAG(d, inventory); err != nil {
					return exitcode.With(exitcode.Invalid, err)
				}
			}
			if d, err = d.Scope(scope, act); err != nil {
				return exitcode.With(exitcode.Invalid, err)
			}
			if compareWaves {
				var o plan.WaveOptions
				if wavesFile != "" {
					if o.Waves, err = readWaves(wavesFile); err != nil {
						return exitcode.With(exitcode.Invalid, err)
					}
					o.WaveSource = wavesFile
					warnUnknown(cmd, d, wavesFile, o.Waves)
				}
				if durationsFile != "" {
					if o.Durations, err = readDurations(durationsFile); err != nil {
						return exitcode.With(exitcode.Invalid, err)
					}
					o.DurationSource = "measured in " + durationsFile
				}
				if src != nil {
					o.DAGSource = "dependencies from the resources (" + src.Name + "), not the spec's dependsOn"
				}
				c, err := plan.CompareWaves(d, scope, o)
				if err != nil {
					return exitcode.With(exitcode.Invalid, err)
				}
				return exitcode.With(exitcode.Invalid, c.Write(cmd.OutOrStdout(), output))
			}
			p, err := plan.Make(d, scope, act)
			if err != nil {
				return err
			}
			return exitcode.With(exitcode.Invalid, p.Write(cmd.OutOrStdout(), output))
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "platform", "platform, stack:NAME or app:NAME")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text, json, mermaid or dot (--compare-waves: text or json)")
	cmd.Flags().StringVar(&action, "action", "deploy", "deploy or teardown (teardown scopes pull in dependents)")
	cmd.Flags().BoolVar(&compareWaves, "compare-waves", false, "compare the deploy time under sync waves with the DAG's")
	cmd.Flags().StringVar(&wavesFile, "waves", "", "YAML map app: wave, instead of the apps' wave annotations")
	cmd.Flags().StringVar(&durationsFile, "durations", "", "a deploy's executor report (JSON): use its measured app durations")
	cmd.Flags().BoolVar(&explainEdges, "explain-edges", false, "hold every dependsOn against what the apps deploy (--manifests): missing ones are errors")
	invFlags = inventoryflags.Register(cmd.Flags(), "folder of rendered manifests, DIR/<app>/*.yaml (--explain-edges; --compare-waves: the DAG from the resources)",
		"instead of --manifests: what the Applications deploy, read from the Argo CD API (read-only)")
	return cmd
}

// readWaves reads a YAML (or JSON) map of app name to its wave: an
// integer, or {wave: W, path: "root@0/storage@-10"} for an app of an
// app-of-apps (the form of the deployctl.dev/sync-wave-path annotation).
func readWaves(path string) (map[string]plan.AppWave, error) {
	data, err := readlimit.ReadFile(path, readlimit.Spec)
	if err != nil {
		return nil, err
	}
	bad := func(err error) error {
		return fmt.Errorf("%s: want a map of app name to a wave (an integer, or {wave: W, path: PARENT@W/...}): %w", path, err)
	}
	// YAML 1.2 (yaml.v3): an app named y or no stays a string.
	var raw map[string]yaml.Node
	if err := safeyaml.Unmarshal(data, &raw); err != nil {
		return nil, bad(err)
	}
	waves := map[string]plan.AppWave{}
	for app, n := range raw {
		var w plan.AppWave
		if n.Kind == yaml.MappingNode {
			var v struct {
				Wave int    `yaml:"wave"`
				Path string `yaml:"path"`
			}
			if err := n.Decode(&v); err != nil {
				return nil, bad(fmt.Errorf("%s: %w", app, err))
			}
			for i := 0; i < len(n.Content); i += 2 {
				if k := n.Content[i].Value; k != "wave" && k != "path" {
					return nil, bad(fmt.Errorf("%s: unknown field %q", app, k))
				}
			}
			if w.Path, err = syncwave.ParsePath(v.Path); err != nil {
				return nil, bad(fmt.Errorf("%s: %w", app, err))
			}
			w.Wave = v.Wave
		} else if err := n.Decode(&w.Wave); err != nil {
			return nil, bad(fmt.Errorf("%s: %w", app, err))
		}
		waves[app] = w
	}
	return waves, nil
}

func warnUnknown(cmd *cobra.Command, d *dag.DAG, file string, waves map[string]plan.AppWave) {
	var unknown []string
	for app := range waves {
		if n := d.Node(app); n == nil || n.Kind != dag.App {
			unknown = append(unknown, app)
		}
	}
	sort.Strings(unknown)
	for _, u := range unknown {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: %q is not an app of this platform (or scope)\n", file, u)
	}
}

// readDurations reads the app durations of a deploy's executor report: the
// run time of every app node that succeeded (or was kept from the run it
// resumed).
func readDurations(path string) (map[string]time.Duration, error) {
	data, err := readlimit.ReadFile(path, readlimit.Spec)
	if err != nil {
		return nil, err
	}
	var r execreport.Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: not an executor report: %w", path, err)
	}
	if r.Kind != execreport.Kind {
		return nil, fmt.Errorf("%s: kind %q, want %q (the report of deployctl deploy)", path, r.Kind, execreport.Kind)
	}
	if r.Action != execreport.ActionDeploy {
		return nil, fmt.Errorf("%s: the report of a %s; durations come from a deploy", path, r.Action)
	}
	var bad []error
	out := map[string]time.Duration{}
	for i, c := range r.Components {
		s := c.DurationSeconds
		if math.IsNaN(s) || s < 0 || s > maxAppSeconds {
			bad = append(bad, fmt.Errorf("%s:%d: components[%d].durationSeconds (app %q): %v is not a measured duration: want 0 to %d seconds",
				path, durationLine(data, i), i, c.Name, s, int(maxAppSeconds)))
			continue
		}
		if (c.Status == "Succeeded" || c.Status == execreport.CompKept) && s > 0 {
			out[c.Name] = time.Duration(s * float64(time.Second))
		}
	}
	if len(bad) > 0 {
		return nil, errors.Join(bad...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no app of this report succeeded: no duration to use", path)
	}
	return out, nil
}

// maxAppSeconds bounds one app's measured deploy time: a day is far beyond
// any sync and health timeout, and keeps the sum of a long chain of apps
// inside time.Duration (292 years) instead of wrapping to a negative
// makespan.
const maxAppSeconds = 24 * 60 * 60

// durationLine finds the line of components[i].durationSeconds (JSON is
// YAML, and yaml.v3 keeps lines); 0 if it cannot.
func durationLine(data []byte, i int) int {
	doc, err := safeyaml.Node(data)
	if err != nil || len(doc.Content) == 0 {
		return 0
	}
	comps := mapValue(doc.Content[0], "components")
	if comps == nil || comps.Kind != yaml.SequenceNode || i >= len(comps.Content) {
		return 0
	}
	if v := mapValue(comps.Content[i], "durationSeconds"); v != nil {
		return v.Line
	}
	return comps.Content[i].Line
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for j := 0; j+1 < len(n.Content); j += 2 {
		if n.Content[j].Value == key {
			return n.Content[j+1]
		}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
