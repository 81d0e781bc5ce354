package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/safeyaml"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/importer/argorules/syncwave"
	execreport "github.com/deployctl/deployctl/pkg/report"
	"github.com/deployctl/deployctl/pkg/resdeps"
)

// Command is one `deployctl plan` as its command line gives it
// (pkg/cmd/deployctl/plan wires the flags to it).
type Command struct {
	File          string // the spec
	Scope         string // platform, stack:NAME or app:NAME
	Output        string // text, json, mermaid or dot
	Action        string // deploy or teardown
	CompareWaves  bool
	WavesFile     string // --waves: a YAML map of app to wave
	DurationsFile string // --durations: a deploy's executor report
	ExplainEdges  bool
	Inventory     resdeps.SourceConfig // --manifests DIR or --live
}

// Run writes the plan, the wave comparison (CompareWaves) or the edge
// report (ExplainEdges) to stdout, warnings to stderr. Every argument
// problem is reported in one pass. Its errors carry the exit code: 3 for
// invalid input or arguments, or missing dependencies; 1 for a failed
// --live read.
func (c Command) Run(ctx context.Context, stdout, stderr io.Writer) error {
	act, err := dag.ParseAction(c.Action)
	if err != nil {
		return exitcode.With(exitcode.Invalid, err)
	}
	var problems []error
	if !c.CompareWaves && (c.WavesFile != "" || c.DurationsFile != "") {
		problems = append(problems, errors.New("--waves and --durations go with --compare-waves"))
	}
	switch {
	case c.ExplainEdges && !c.Inventory.Given():
		problems = append(problems, errors.New("--explain-edges needs --manifests DIR (the rendered manifests of the apps) or --live"))
	case c.ExplainEdges && c.CompareWaves:
		problems = append(problems, errors.New("--explain-edges and --compare-waves are two reports: run them one at a time"))
	case c.ExplainEdges && c.Scope != "platform":
		problems = append(problems, errors.New("--explain-edges checks the whole platform: leave out --scope"))
	case c.Inventory.Given() && !c.ExplainEdges && !c.CompareWaves:
		problems = append(problems, errors.New("--manifests and --live go with --explain-edges or --compare-waves"))
	}
	src, err := c.Inventory.Open()
	if err != nil {
		problems = append(problems, err)
	}
	d, err := dag.Load(c.File)
	if err != nil {
		problems = append(problems, err)
	}
	if len(problems) > 0 {
		return exitcode.With(exitcode.Invalid, errors.Join(problems...))
	}
	var inventory []resdeps.App
	var noInventory []string
	if src != nil {
		if inventory, err = src.Inventory(ctx, AppRefs(d)); err != nil {
			return exitcode.With(exitcode.Failure, err)
		}
		if inventory, noInventory, err = InventoryApps(d, src.Name, inventory); err != nil {
			return exitcode.With(exitcode.Invalid, err)
		}
	}
	if c.ExplainEdges {
		r := ExplainEdges(d, src.Name, inventory, noInventory)
		if err := r.Write(stdout, c.Output); err != nil {
			return exitcode.With(exitcode.Invalid, err)
		}
		if n := len(r.Missing); n > 0 {
			return exitcode.With(exitcode.Invalid, fmt.Errorf("%d missing %s: a consumer may start before what it needs (above)", n, plural(n, "dependency", "dependencies")))
		}
		return nil
	}
	if src != nil {
		if d, err = EvidenceDAG(d, inventory); err != nil {
			return exitcode.With(exitcode.Invalid, err)
		}
	}
	if d, err = d.Scope(c.Scope, act); err != nil {
		return exitcode.With(exitcode.Invalid, err)
	}
	if c.CompareWaves {
		var o WaveOptions
		if c.WavesFile != "" {
			if o.Waves, err = readWaves(c.WavesFile); err != nil {
				return exitcode.With(exitcode.Invalid, err)
			}
			o.WaveSource = c.WavesFile
			warnUnknown(stderr, d, c.WavesFile, o.Waves)
		}
		if c.DurationsFile != "" {
			if o.Durations, err = readDurations(c.DurationsFile); err != nil {
				return exitcode.With(exitcode.Invalid, err)
			}
			o.DurationSource = "measured in " + c.DurationsFile
		}
		if src != nil {
			o.DAGSource = "dependencies from the resources (" + src.Name + "), not the spec's dependsOn"
		}
		cmp, err := CompareWaves(d, c.Scope, o)
		if err != nil {
			return exitcode.With(exitcode.Invalid, err)
		}
		return exitcode.With(exitcode.Invalid, cmp.Write(stdout, c.Output))
	}
	p, err := Make(d, c.Scope, act)
	if err != nil {
		return err
	}
	return exitcode.With(exitcode.Invalid, p.Write(stdout, c.Output))
}

// readWaves reads a YAML (or JSON) map of app name to its wave: an
// integer, or {wave: W, path: "root@0/storage@-10"} for an app of an
// app-of-apps (the form of the deployctl.dev/sync-wave-path annotation).
func readWaves(path string) (map[string]AppWave, error) {
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
	waves := map[string]AppWave{}
	for app, n := range raw {
		var w AppWave
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

func warnUnknown(w io.Writer, d *dag.DAG, file string, waves map[string]AppWave) {
	var unknown []string
	for app := range waves {
		if n := d.Node(app); n == nil || n.Kind != dag.App {
			unknown = append(unknown, app)
		}
	}
	sort.Strings(unknown)
	for _, u := range unknown {
		fmt.Fprintf(w, "warning: %s: %q is not an app of this platform (or scope)\n", file, u)
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
