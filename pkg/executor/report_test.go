package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

func parseMetrics(t *testing.T, text []byte) map[string]*dto.MetricFamily {
	t.Helper()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("Prometheus cannot parse the metrics: %v\n%s", err, text)
	}
	return fams
}

func TestMetricsExposition(t *testing.T) {
	m := NewMetrics(ActionDeploy, "e2e", `stag"ing\`+"\n")
	m.SetHealth("db", "data", "Healthy")
	m.SetHealth("catalog", "apps", "Degraded")
	m.SetHealth("gone", "apps", "Absent")
	m.Error(PhaseFollow)
	m.Error(PhaseFollow)
	m.Error("custom")
	m.Finish(StatusFailed)
	text := m.Render()
	fams := parseMetrics(t, text)
	for name, typ := range map[string]dto.MetricType{
		"executor_action_duration_seconds": dto.MetricType_GAUGE,
		"executor_action_status":           dto.MetricType_GAUGE,
		"executor_component_health":        dto.MetricType_GAUGE,
		"executor_errors_total":            dto.MetricType_COUNTER,
	} {
		f := fams[name]
		if f == nil || f.GetType() != typ || f.GetHelp() == "" {
			t.Errorf("%s: %v", name, f)
		}
	}
	value := func(name string, labels map[string]string) (float64, bool) {
	next:
		for _, mm := range fams[name].GetMetric() {
			got := map[string]string{}
			for _, l := range mm.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			if g := mm.GetGauge(); g != nil {
				return g.GetValue(), true
			}
			return mm.GetCounter().GetValue(), true
		}
		return 0, false
	}
	env := map[string]string{"environment": "stag\"ing\\\n", "action": "deploy", "platform": "e2e"}
	if v, ok := value("executor_action_status", map[string]string{"status": "Failed", "environment": env["environment"]}); !ok || v != 1 {
		t.Errorf("status Failed = %v (%v): the environment label must round-trip", v, ok)
	}
	if v, _ := value("executor_action_status", map[string]string{"status": "Succeeded"}); v != 0 {
		t.Errorf("status Succeeded = %v", v)
	}
	if n := len(fams["executor_action_status"].GetMetric()); n != len(Statuses) {
		t.Errorf("%d status series, want %d", n, len(Statuses))
	}
	if v, _ := value("executor_component_health", map[string]string{"component": "catalog", "health": "Degraded", "stack": "apps"}); v != 1 {
		t.Error("catalog Degraded must be 1")
	}
	if v, _ := value("executor_component_health", map[string]string{"component": "catalog", "health": "Healthy"}); v != 0 {
		t.Error("catalog Healthy must be 0")
	}
	if n := len(fams["executor_component_health"].GetMetric()); n != 3*len(Healths) {
		t.Errorf("%d health series", n)
	}
	if v, _ := value("executor_errors_total", map[string]string{"phase": "follow"}); v != 2 {
		t.Errorf("follow errors = %v", v)
	}
	if v, ok := value("executor_errors_total", map[string]string{"phase": "apply"}); !ok || v != 0 {
		t.Error("every phase is reported, at zero too")
	}
	if _, ok := value("executor_errors_total", map[string]string{"phase": "custom"}); !ok {
		t.Error("an unlisted phase is reported")
	}
	if !bytes.Equal(text, m.Render()) {
		t.Error("a finished action renders the same text every time")
	}
}

func TestMetricsServer(t *testing.T) {
	m := NewMetrics(ActionValidate, "e2e", "staging")
	ctx, cancel := context.WithCancel(context.Background())
	addr, done, err := m.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Content-Type") != ContentType {
		t.Errorf("content type %q", resp.Header.Get("Content-Type"))
	}
	if v := parseMetrics(t, body)["executor_action_status"]; v == nil {
		t.Error("no status metric served")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("server: %v", err)
	}
	if a, err := metricsAddr("9100"); err != nil || a != "127.0.0.1:9100" {
		t.Errorf("a bare port binds loopback: %q %v", a, err)
	}
	if a, err := metricsAddr("0.0.0.0:9100"); err != nil || a != "0.0.0.0:9100" {
		t.Errorf("an explicit host is kept: %q %v", a, err)
	}
}

func sampleReport() *Report {
	r := newReport(nil, ActionDeploy)
	r.Platform, r.Environment, r.Scope, r.SpecHash = "e2e", "staging", "platform", "abc"
	r.Preflight = []Check{{Name: "api", Status: Pass, Reason: "Kubernetes v1.32.2"}, {Name: "nodes", Status: Warn, Reason: "1 of 1 nodes Ready; fewer than 3"}}
	r.Applied = []Applied{{Kind: "WorkflowTemplate", Namespace: "argo", Name: "e2e-deploy", Result: Configured}, {Kind: "ClusterWorkflowTemplate", Name: "deployctl-validate", Result: Unchanged}}
	r.Workflow = &WorkflowRun{Name: "e2e-deploy-x1", Namespace: "argo", Decision: DecideResume, Reason: "the last run failed", Phase: "Failed",
		ResetNodes: []string{"catalog", "gateway"}, KeptNodes: []string{"db"}}
	r.Components = []Component{
		{Name: "db", Stack: "data", Status: CompKept, Health: "Healthy", Sync: "Synced", DurationSeconds: 12.5},
		{Name: "catalog", Stack: "apps", Status: "Failed", Health: "Degraded", Sync: "Synced", Message: "catalog is Degraded",
			StepResult: &stepresult.Result{Command: "sync-and-wait", ExitCode: 1, Health: "Degraded"}},
		{Name: "gateway", Stack: "apps", Status: CompNotRun, Message: "not run: catalog failed"},
	}
	r.fail("catalog", PhaseFollow, "catalog is Degraded", "Argo CD health Degraded")
	r.recommend("fix catalog, then run deploy again: it resumes from catalog")
	r.Health = AggDegraded
	r.finish(exitcode.Failure, StatusFailed, "e2e-deploy-x1 failed at catalog", map[string]int{"follow": 1})
	return r
}

func TestReportJSONAndSummary(t *testing.T) {
	r := sampleReport()
	path := filepath.Join(t.TempDir(), "sub", "report.json")
	if err := r.writeJSON(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kind", "action", "status", "exitCode", "summary", "preflight", "applied", "workflow", "components", "failures", "metrics", "recommendations", "aggregateHealth"} {
		if _, ok := back[k]; !ok {
			t.Errorf("report lacks %s", k)
		}
	}
	m := back["metrics"].(map[string]any)
	if m["components"].(float64) != 3 || m["componentsByStatus"].(map[string]any)["NotRun"].(float64) != 1 {
		t.Errorf("metrics %v", m)
	}
	var text bytes.Buffer
	r.writeText(&text)
	for _, want := range []string{
		"deployctl deploy e2e (environment staging, scope platform): FAILED (exit 1)",
		"preflight: 1 pass, 1 warn, 0 fail, 0 skipped",
		"warn nodes",
		"applied 2 objects: 1 configured, 1 unchanged",
		"workflow argo/e2e-deploy-x1: resume (the last run failed), Failed",
		"runs again: catalog, gateway",
		"kept (not synced again): db",
		"components (3), aggregate health Degraded:",
		"catalog                      Failed     Degraded/Synced",
		"gateway                      NotRun     -/-",
		"catalog [follow]: catalog is Degraded",
		"- fix catalog, then run deploy again: it resumes from catalog",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, text.String())
		}
	}
}

// The exit code of every outcome (the contract: 0 ok, 1 failure, 2
// partial, 3 invalid, 4 timeout).
func TestExitCodes(t *testing.T) {
	for agg, want := range map[string]int{AggHealthy: 0, AggProgressing: 2, AggDegraded: 2, AggFailed: 1} {
		if got := healthCode(agg); got != want {
			t.Errorf("healthCode(%s) = %d, want %d", agg, got, want)
		}
	}
	checks := func(cs ...Check) []Check { return cs }
	for name, tc := range map[string]struct {
		checks []Check
		want   int
	}{
		"all pass, warnings allowed": {checks(Check{Status: Pass}, Check{Status: Warn}), 0},
		"cluster not ready":          {checks(Check{Status: Fail, Code: 1}, Check{Status: Pass}), 1},
		"primitive missing wins":     {checks(Check{Status: Fail, Code: 1}, Check{Status: Fail, Code: 3}), 3},
		"skips do not fail":          {checks(Check{Status: Skip}), 0},
	} {
		if got := preflightCode(tc.checks); got != tc.want {
			t.Errorf("preflight %s: %d, want %d", name, got, tc.want)
		}
	}
	for code, want := range map[int]string{0: StatusSucceeded, 1: StatusFailed, 2: StatusPartial, 3: StatusInvalid, 4: StatusTimeout} {
		if got := statusOf(code); got != want {
			t.Errorf("statusOf(%d) = %s", code, got)
		}
	}
	comps := func(statuses ...string) []Component {
		var out []Component
		for _, s := range statuses {
			out = append(out, Component{Status: s})
		}
		return out
	}
	for name, tc := range map[string]struct {
		phase wfv1.WorkflowPhase
		comps []Component
		left  int
		want  int
	}{
		"clean":                        {wfv1.WorkflowSucceeded, comps(CompDeleted, CompNothingToDo), 0, 0},
		"absent platform":              {wfv1.WorkflowSucceeded, comps(CompNothingToDo, CompNothingToDo), 0, 0},
		"orphans":                      {wfv1.WorkflowFailed, comps(CompDeleted, CompOrphans, CompNotRun), 1, 2},
		"an Application left":          {wfv1.WorkflowSucceeded, comps(CompDeleted), 1, 2},
		"a node failed":                {wfv1.WorkflowFailed, comps(CompDeleted, "Failed", CompNotRun), 1, 1},
		"orphans and a failure":        {wfv1.WorkflowFailed, comps(CompOrphans, "Error"), 0, 1},
		"run failed, no node to blame": {wfv1.WorkflowError, comps(CompNotRun), 0, 1},
	} {
		if got := teardownCode(tc.phase, tc.comps, tc.left); got != tc.want {
			t.Errorf("teardown %s: %d, want %d", name, got, tc.want)
		}
	}
}
