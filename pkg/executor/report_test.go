package executor

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/deployctl/deployctl/pkg/report"
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
	m.Finish(report.StatusFailed)
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
	if n := len(fams["executor_action_status"].GetMetric()); n != len(report.Statuses) {
		t.Errorf("%d status series, want %d", n, len(report.Statuses))
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

// The exit code of every outcome (the contract: 0 ok, 1 failure, 2
// partial, 3 invalid, 4 timeout).
func TestExitCodes(t *testing.T) {
	for agg, want := range map[string]int{AggHealthy: 0, AggProgressing: 2, AggDegraded: 2, AggFailed: 1} {
		if got := healthCode(agg); got != want {
			t.Errorf("healthCode(%s) = %d, want %d", agg, got, want)
		}
	}
	checks := func(cs ...report.Check) []report.Check { return cs }
	for name, tc := range map[string]struct {
		checks []report.Check
		want   int
	}{
		"all pass, warnings allowed": {checks(report.Check{Status: report.Pass}, report.Check{Status: report.Warn}), 0},
		"cluster not ready":          {checks(report.Check{Status: report.Fail, Code: 1}, report.Check{Status: report.Pass}), 1},
		"primitive missing wins":     {checks(report.Check{Status: report.Fail, Code: 1}, report.Check{Status: report.Fail, Code: 3}), 3},
		"skips do not fail":          {checks(report.Check{Status: report.Skip}), 0},
	} {
		if got := preflightCode(tc.checks); got != tc.want {
			t.Errorf("preflight %s: %d, want %d", name, got, tc.want)
		}
	}
	for code, want := range map[int]string{0: report.StatusSucceeded, 1: report.StatusFailed, 2: report.StatusPartial, 3: report.StatusInvalid, 4: report.StatusTimeout} {
		if got := report.StatusOf(code); got != want {
			t.Errorf("StatusOf(%d) = %s", code, got)
		}
	}
	comps := func(statuses ...string) []report.Component {
		var out []report.Component
		for _, s := range statuses {
			out = append(out, report.Component{Status: s})
		}
		return out
	}
	for name, tc := range map[string]struct {
		phase wfv1.WorkflowPhase
		comps []report.Component
		left  int
		want  int
	}{
		"clean":                        {wfv1.WorkflowSucceeded, comps(report.CompDeleted, report.CompNothingToDo), 0, 0},
		"absent platform":              {wfv1.WorkflowSucceeded, comps(report.CompNothingToDo, report.CompNothingToDo), 0, 0},
		"orphans":                      {wfv1.WorkflowFailed, comps(report.CompDeleted, report.CompOrphans, report.CompNotRun), 1, 2},
		"an Application left":          {wfv1.WorkflowSucceeded, comps(report.CompDeleted), 1, 2},
		"a node failed":                {wfv1.WorkflowFailed, comps(report.CompDeleted, "Failed", report.CompNotRun), 1, 1},
		"orphans and a failure":        {wfv1.WorkflowFailed, comps(report.CompOrphans, "Error"), 0, 1},
		"run failed, no node to blame": {wfv1.WorkflowError, comps(report.CompNotRun), 0, 1},
	} {
		if got := teardownCode(tc.phase, tc.comps, tc.left); got != tc.want {
			t.Errorf("teardown %s: %d, want %d", name, got, tc.want)
		}
	}
}
