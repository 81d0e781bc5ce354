package metrics

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/deployctl/deployctl/internal/redact"
	"github.com/deployctl/deployctl/pkg/report"
)

// phases are the executor's error phases (executor/log.go).
var phases = []string{"config", "preflight", "compile", "apply", "submit", "follow", "validate", "verify"}

// argoToken is a known credential.
const argoToken = "argocd-api-token-51c8e0d2a9"

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
	m := New("deploy", "e2e", `stag"ing\`+"\n", phases, nil)
	m.SetHealth("db", "data", "Healthy")
	m.SetHealth("catalog", "apps", "Degraded")
	m.SetHealth("gone", "apps", "Absent")
	m.Error("follow")
	m.Error("follow")
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
	m := New("validate", "e2e", "staging", phases, nil)
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
	if a, err := Addr("9100"); err != nil || a != "127.0.0.1:9100" {
		t.Errorf("a bare port binds loopback: %q %v", a, err)
	}
	if a, err := Addr("0.0.0.0:9100"); err != nil || a != "0.0.0.0:9100" {
		t.Errorf("an explicit host is kept: %q %v", a, err)
	}
}

// Issue 11, secrets in output: metrics label values are masked too (a
// value with a URL password, a known credential used as a name), and the
// exposition still parses.
func TestMetricsLabelsMasked(t *testing.T) {
	secrets := &redact.Set{}
	secrets.Add(argoToken)
	m := New("deploy", "minimal", "https://u:pw-1234567@git.example.com/", phases, secrets)
	m.SetHealth(argoToken, "base", "Healthy")
	text := m.Render()
	parseMetrics(t, text)
	for _, leak := range []string{"pw-1234567", argoToken} {
		if bytes.Contains(text, []byte(leak)) {
			t.Errorf("metrics hold %q:\n%s", leak, text)
		}
	}
	if !bytes.Contains(text, []byte(`environment="https://REDACTED@git.example.com/"`)) {
		t.Errorf("metrics:\n%s", text)
	}
}
