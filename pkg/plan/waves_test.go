package plan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// wavesSpec: five apps, health timeouts a 10m, b 2m, c 3m, d 4m, e 1m;
// edges b → c → e (c waits for b, e for c). Waves: a, b -10; c, d 0; e 5.
// a and b are children of parent p1 (wave -5), c and d of p2 (wave 0) in
// the app-of-apps variant, where a is wave -10, b 0, c 0, d 1 inside them.
const wavesSpec = `apiVersion: deployctl.dev/v1alpha1
kind: Platform
metadata: {name: waves}
spec:
  argocd: {namespace: argocd, server: argocd-server.argocd.svc:443}
  workflow: {namespace: argo, serviceAccount: deployctl, image: example.com/step:1}
  defaults:
    source: {repoURL: https://git.example.com/p.git, targetRevision: main, path: x}
  stacks:
  - name: s
    apps:
    - name: a
      timeouts: {health: 10m}
      annotations: {A}
    - name: b
      timeouts: {health: 2m}
      annotations: {B}
    - name: c
      dependsOn: [b]
      timeouts: {health: 3m}
      annotations: {C}
    - name: d
      timeouts: {health: 4m}
      annotations: {D}
    - name: e
      dependsOn: [c]
      timeouts: {health: 1m}
      annotations: {E}
`

func wavesDAG(t *testing.T, ann map[string]string) *dag.DAG {
	t.Helper()
	src := wavesSpec
	for _, k := range []string{"A", "B", "C", "D", "E"} {
		src = strings.Replace(src, "{"+k+"}", "{"+ann[k]+"}", 1)
	}
	doc, err := spec.Load("waves.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	d, err := dag.Build(doc)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func wave(n string) string { return `deployctl.dev/sync-wave: "` + n + `"` }

func flatWaves(t *testing.T) *dag.DAG {
	return wavesDAG(t, map[string]string{"A": wave("-10"), "B": wave("-10"), "C": wave("0"), "D": wave("0"), "E": wave("5")})
}

func TestCompareWavesFlat(t *testing.T) {
	c, err := CompareWaves(flatWaves(t), "", WaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Waves: -10 max(a 10m, b 2m) = 10m; 0 max(c 3m, d 4m) = 4m; 5 e 1m: 15m.
	// DAG: a 10m alone; b → c → e 2+3+1 = 6m; d 4m: 10m.
	check(t, c, 15*time.Minute, 10*time.Minute, 1.5)
	if c.Model != "waves" || c.MeasuredApps != 0 || len(c.NoWave) != 0 {
		t.Errorf("model %s, measured %d, no wave %v", c.Model, c.MeasuredApps, c.NoWave)
	}
	if got := names(c.CriticalPath); got != "a" {
		t.Errorf("critical path %s, want a", got)
	}
	w := c.Waves.Waves
	if len(w) != 3 || w[0].Wave != -10 || w[0].Slowest != "a" || w[1].Slowest != "d" || w[2].Slowest != "e" {
		t.Errorf("waves %+v", w)
	}
}

func TestCompareWavesMeasuredDurations(t *testing.T) {
	c, err := CompareWaves(flatWaves(t), "", WaveOptions{
		Durations:      map[string]time.Duration{"a": time.Minute},
		DurationSource: "report r.json",
	})
	if err != nil {
		t.Fatal(err)
	}
	// a takes 1m: waves max(1, 2) + max(3, 4) + 1 = 7m; DAG b → c → e = 6m.
	check(t, c, 7*time.Minute, 6*time.Minute, 7.0/6)
	if c.MeasuredApps != 1 || names(c.CriticalPath) != "b c e" {
		t.Errorf("measured %d, critical path %s", c.MeasuredApps, names(c.CriticalPath))
	}
	var out bytes.Buffer
	if err := c.Write(&out, "text"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"report r.json for 1 apps, health timeouts for the 4 others", "Sync waves (every wave", ": 7m\n", "critical path: b 2m → c 3m → e 1m", "1.17× as long as the DAG: 1m more"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCompareWavesAppOfApps(t *testing.T) {
	path := func(p string) string { return `, deployctl.dev/sync-wave-path: "` + p + `"` }
	d := wavesDAG(t, map[string]string{
		"A": wave("-10") + path("root@0/p1@-5"),
		"B": wave("0") + path("root@0/p1@-5"),
		"C": wave("0") + path("root@0/p2@0"),
		"D": wave("1") + path("root@0/p2@0"),
		"E": wave("5") + path("root@0"),
	})
	c, err := CompareWaves(d, "", WaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Inside root: p1 (wave -5) = a 10m then b 2m = 12m; p2 (wave 0) =
	// max(c 3m) then d 4m = 7m; e (wave 5) 1m: 12 + 7 + 1 = 20m. (One flat
	// order of the same waves would give 10 + 3 + 4 + 1 = 18m.)
	check(t, c, 20*time.Minute, 10*time.Minute, 2)
	if c.Model != "app-of-apps" {
		t.Errorf("model %s", c.Model)
	}
	root := c.Waves.Waves
	if len(root) != 1 || root[0].Members[0].Name != "root" {
		t.Fatalf("top level %+v", root)
	}
	inner := root[0].Members[0].Group
	if inner.Seconds != Seconds(20*60) || len(inner.Waves) != 3 || inner.Waves[0].Slowest != "p1" || inner.Waves[0].Seconds != Seconds(12*60) {
		t.Errorf("root's group %+v", inner)
	}
	var out bytes.Buffer
	if err := c.Write(&out, "json"); err != nil {
		t.Fatal(err)
	}
	var back WaveComparison
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back.WaveMakespan != c.WaveMakespan || back.Ratio != 2 {
		t.Errorf("json round trip: %v %+v", err, back)
	}
}

func TestCompareWavesFromFile(t *testing.T) {
	c, err := CompareWaves(flatWaves(t), "", WaveOptions{Waves: map[string]AppWave{"a": {}, "b": {}, "c": {Wave: 1}, "d": {Wave: 1}}, WaveSource: "w.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	// The file replaces the annotations; e is not in it: wave 0.
	// Wave 0: max(a 10, b 2, e 1) = 10m; wave 1: max(c 3, d 4) = 4m.
	check(t, c, 14*time.Minute, 10*time.Minute, 1.4)
	if strings.Join(c.NoWave, ",") != "e" || c.WaveSource != "w.yaml" {
		t.Errorf("no wave %v, source %s", c.NoWave, c.WaveSource)
	}
}

func TestCompareWavesScoped(t *testing.T) {
	d, err := flatWaves(t).Scope("app:e", dag.Deploy)
	if err != nil {
		t.Fatal(err)
	}
	c, err := CompareWaves(d, "app:e", WaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Only b, c, e: waves 2 + 3 + 1 = 6m, the same as their chain.
	check(t, c, 6*time.Minute, 6*time.Minute, 1)
	if !strings.Contains(c.text(), "no time lost to wave barriers") {
		t.Error(c.text())
	}
}

func TestCompareWavesNeedsWaves(t *testing.T) {
	_, err := CompareWaves(wavesDAG(t, nil), "", WaveOptions{})
	if err == nil || !strings.Contains(err.Error(), "--waves FILE") {
		t.Errorf("err = %v", err)
	}
	d := wavesDAG(t, map[string]string{"A": `argocd.argoproj.io/sync-wave: "x"`})
	if _, err := CompareWaves(d, "", WaveOptions{}); err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Errorf("err = %v", err)
	}
}

func check(t *testing.T, c *WaveComparison, waves, dagTime time.Duration, ratio float64) {
	t.Helper()
	if c.WaveMakespan.Duration() != waves || c.DAGMakespan.Duration() != dagTime {
		t.Errorf("waves %s, DAG %s; want %s, %s", c.WaveMakespan.Duration(), c.DAGMakespan.Duration(), waves, dagTime)
	}
	if d := c.Ratio - ratio; d > 1e-9 || d < -1e-9 {
		t.Errorf("ratio %v, want %v", c.Ratio, ratio)
	}
	if c.Saved.Duration() != waves-dagTime {
		t.Errorf("saved %s", c.Saved.Duration())
	}
}

func names(ts []Timed) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return strings.Join(out, " ")
}
