package plan

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/importer/argorules/syncwave"
)

// AppWave is an app's wave and the app-of-apps parents above it.
type AppWave struct {
	Wave int
	Path []syncwave.Step
}

// WaveOptions say where waves and durations come from.
type WaveOptions struct {
	// Waves, when not nil, gives every app's wave (a --waves file; apps
	// not in it are wave 0, like an Application without the annotation) and
	// replaces the annotations, app-of-apps parents included.
	Waves map[string]AppWave
	// WaveSource names where Waves came from, for the output.
	WaveSource string
	// Durations are measured app durations (an executor report); an app
	// without one counts with its health timeout.
	Durations map[string]time.Duration
	// DurationSource names where Durations came from.
	DurationSource string
	// DAGSource names what the DAG is, when not the spec's dependsOn (the
	// dependencies the apps' resources show: EvidenceDAG).
	DAGSource string
}

// WaveComparison is `deployctl plan --compare-waves`: how long the same apps
// take under sync-wave ordering and under the DAG.
type WaveComparison struct {
	Platform string `json:"platform"`
	Scope    string `json:"scope"`
	// Model is "waves" (one wave order over every app) or "app-of-apps"
	// (apps ordered in waves inside their parent Application, parents in
	// waves inside theirs).
	Model          string `json:"model"`
	WaveSource     string `json:"waveSource"`
	DurationSource string `json:"durationSource"`
	DAGSource      string `json:"dagSource"`
	Apps           int    `json:"apps"`
	// MeasuredApps have a duration from the report; the others count with
	// their health timeout.
	MeasuredApps int     `json:"measuredApps"`
	WaveMakespan Seconds `json:"waveMakespanSeconds"`
	DAGMakespan  Seconds `json:"dagMakespanSeconds"`
	// Ratio is WaveMakespan / DAGMakespan: how many times longer waves take.
	Ratio        float64    `json:"ratio"`
	Saved        Seconds    `json:"savedSeconds"`
	CriticalPath []Timed    `json:"criticalPath"`
	Waves        *WaveGroup `json:"waves"`
	// NoWave are the apps without any wave (wave 0).
	NoWave []string `json:"appsWithoutWave,omitempty"`
}

// Timed is an app and its duration.
type Timed struct {
	Name     string  `json:"name"`
	Seconds  Seconds `json:"seconds"`
	Measured bool    `json:"measured,omitempty"`
}

// WaveGroup is what one sync orders by wave: the whole platform, or the
// children of one parent Application.
type WaveGroup struct {
	Parent  string  `json:"parent,omitempty"`
	Seconds Seconds `json:"seconds"`
	Waves   []Wave  `json:"waves"`
}

// Wave is one wave of a group: it starts when the wave before it is done,
// and is done when its slowest member is.
type Wave struct {
	Wave    int          `json:"wave"`
	Seconds Seconds      `json:"seconds"`
	Slowest string       `json:"slowest"`
	Members []WaveMember `json:"members"`
}

// WaveMember is an app, or a parent Application with its own group.
type WaveMember struct {
	Name     string     `json:"name"`
	Seconds  Seconds    `json:"seconds"`
	Measured bool       `json:"measured,omitempty"`
	Group    *WaveGroup `json:"group,omitempty"`
}

// CompareWaves computes the deploy time of a (scoped) DAG's apps under
// sync-wave ordering — every wave waits for the slowest member of the wave
// before it — against the DAG's critical path, with the same durations.
func CompareWaves(d *dag.DAG, scope string, o WaveOptions) (*WaveComparison, error) {
	if scope == "" {
		scope = "platform"
	}
	c := &WaveComparison{Platform: d.Platform.Metadata.Name, Scope: scope, Model: "waves",
		WaveSource: o.WaveSource, DurationSource: o.DurationSource, DAGSource: o.DAGSource}
	if c.DAGSource == "" {
		c.DAGSource = "the spec's dependsOn"
	}
	if c.WaveSource == "" {
		c.WaveSource = "annotations"
	}
	if c.DurationSource == "" {
		c.DurationSource = "health timeouts"
	}
	duration := func(app string) (time.Duration, bool) {
		if t, ok := o.Durations[app]; ok {
			return t, true
		}
		return Weight(d, app), false
	}

	root := &WaveGroup{}
	groups := map[string]*WaveGroup{} // parent path → its group
	anyWave := false
	for _, app := range d.Apps() {
		wave, path, has, err := appWave(d, app, o.Waves)
		if err != nil {
			return nil, err
		}
		anyWave = anyWave || has || len(path) > 0
		if !has {
			c.NoWave = append(c.NoWave, app)
		}
		g, key := root, ""
		for _, step := range path {
			key += "/" + step.Name
			sub, ok := groups[key]
			if !ok {
				sub = &WaveGroup{Parent: step.Name}
				groups[key] = sub
				g.add(step.Wave, WaveMember{Name: step.Name, Group: sub})
			}
			g = sub
			c.Model = "app-of-apps"
		}
		t, measured := duration(app)
		if measured {
			c.MeasuredApps++
		}
		g.add(wave, WaveMember{Name: app, Seconds: secs(t), Measured: measured})
		c.Apps++
	}
	if !anyWave {
		return nil, errors.New("no app has a sync wave (annotation " + syncwave.Annotation + " or " + syncwave.ArgoCDAnnotation +
			"): give the waves with --waves FILE (a YAML map app: wave)")
	}
	root.settle()
	c.Waves = root
	c.WaveMakespan = root.Seconds

	path, makespan, err := d.Graph.CriticalPath(func(n string) time.Duration {
		t, _ := duration(n) // a join weighs 0: Weight is 0 for it
		return t
	})
	if err != nil {
		return nil, err
	}
	for _, n := range path {
		if d.Node(n).Kind == dag.App {
			t, measured := duration(n)
			c.CriticalPath = append(c.CriticalPath, Timed{Name: n, Seconds: secs(t), Measured: measured})
		}
	}
	c.DAGMakespan = secs(makespan)
	c.Saved = c.WaveMakespan - c.DAGMakespan
	if c.DAGMakespan > 0 {
		c.Ratio = float64(c.WaveMakespan) / float64(c.DAGMakespan)
	}
	return c, nil
}

// appWave is an app's wave and app-of-apps parents: from waves when given,
// else from its annotations. has says whether a wave was given at all.
func appWave(d *dag.DAG, app string, waves map[string]AppWave) (wave int, path []syncwave.Step, has bool, err error) {
	if waves != nil {
		w, has := waves[app]
		return w.Wave, w.Path, has, nil
	}
	ann := d.Node(app).App.Annotations
	for _, key := range []string{syncwave.Annotation, syncwave.ArgoCDAnnotation} {
		v, ok := ann[key]
		if !ok {
			continue
		}
		// Argo CD reads a wave it cannot parse as 0; here it is a mistake.
		if wave, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
			return 0, nil, false, fmt.Errorf("app %s: annotation %s: %q is not an integer", app, key, v)
		}
		has = true
		break
	}
	if path, err = syncwave.ParsePath(ann[syncwave.PathAnnotation]); err != nil {
		return 0, nil, false, fmt.Errorf("app %s: annotation %s: %w", app, syncwave.PathAnnotation, err)
	}
	return wave, path, has, nil
}

func (g *WaveGroup) add(wave int, m WaveMember) {
	for i := range g.Waves {
		if g.Waves[i].Wave == wave {
			g.Waves[i].Members = append(g.Waves[i].Members, m)
			return
		}
	}
	g.Waves = append(g.Waves, Wave{Wave: wave, Members: []WaveMember{m}})
}

// settle orders the waves and members and adds up the times: a group takes
// the sum over its waves of the slowest member of each.
func (g *WaveGroup) settle() {
	sort.Slice(g.Waves, func(i, j int) bool { return g.Waves[i].Wave < g.Waves[j].Wave })
	g.Seconds = 0
	for i := range g.Waves {
		w := &g.Waves[i]
		for j := range w.Members {
			if sub := w.Members[j].Group; sub != nil {
				sub.settle()
				w.Members[j].Seconds = sub.Seconds
			}
		}
		sort.Slice(w.Members, func(a, b int) bool { return w.Members[a].Name < w.Members[b].Name })
		w.Seconds, w.Slowest = 0, ""
		for _, m := range w.Members {
			if m.Seconds > w.Seconds || w.Slowest == "" {
				w.Seconds, w.Slowest = m.Seconds, m.Name
			}
		}
		g.Seconds += w.Seconds
	}
}

// Write renders the comparison as text or json.
func (c *WaveComparison) Write(w io.Writer, format string) error {
	return textOrJSON(w, format, "--compare-waves", c.text, c)
}

func (c *WaveComparison) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Platform %s, scope %s: %d apps\n", c.Platform, c.Scope, c.Apps)
	fmt.Fprintf(&b, "  waves: %s (%s model)\n", c.WaveSource, c.Model)
	dur := c.DurationSource
	if c.MeasuredApps > 0 && c.MeasuredApps < c.Apps {
		dur += fmt.Sprintf(" for %d apps, health timeouts for the %d others", c.MeasuredApps, c.Apps-c.MeasuredApps)
	}
	fmt.Fprintf(&b, "  durations: %s\n", dur)
	fmt.Fprintf(&b, "  DAG: %s\n", c.DAGSource)
	if len(c.NoWave) > 0 {
		fmt.Fprintf(&b, "  without a wave (wave 0): %s\n", strings.Join(c.NoWave, ", "))
	}
	fmt.Fprintf(&b, "\nSync waves (every wave waits for the slowest app of the wave before it): %s\n", Short(c.WaveMakespan.Duration()))
	c.Waves.text(&b, "  ")
	fmt.Fprintf(&b, "\nDAG (every app starts when its own dependencies are Healthy): %s\n  critical path:", Short(c.DAGMakespan.Duration()))
	for i, t := range c.CriticalPath {
		if i > 0 {
			b.WriteString(" →")
		}
		fmt.Fprintf(&b, " %s %s", t.Name, Short(t.Seconds.Duration()))
	}
	b.WriteString("\n\n")
	switch {
	case c.DAGMakespan == 0:
		b.WriteString("The DAG takes no time with these durations: no ratio.\n")
	case c.Saved > 0:
		fmt.Fprintf(&b, "Sync waves take %.2f× as long as the DAG: %s more.\n", c.Ratio, Short(c.Saved.Duration()))
	default:
		fmt.Fprintf(&b, "Sync waves take %.2f× as long as the DAG: no time lost to wave barriers.\n", c.Ratio)
	}
	return b.String()
}

func (g *WaveGroup) text(b *strings.Builder, indent string) {
	for _, w := range g.Waves {
		var names []string
		for _, m := range w.Members {
			if m.Group == nil {
				names = append(names, m.Name)
			}
		}
		line := fmt.Sprintf("%swave %-5d %8s", indent, w.Wave, Short(w.Seconds.Duration()))
		if len(w.Members) > 1 {
			line += "  slowest " + w.Slowest
		}
		if len(names) > 0 {
			line += "  apps: " + strings.Join(names, ", ")
		}
		b.WriteString(line + "\n")
		for _, m := range w.Members {
			if m.Group != nil {
				fmt.Fprintf(b, "%s  parent %s %s\n", indent, m.Name, Short(m.Seconds.Duration()))
				m.Group.text(b, indent+"    ")
			}
		}
	}
}
