package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

func sampleReport() *Report {
	r := New(ActionDeploy)
	r.Platform, r.Environment, r.Scope, r.SpecHash = "e2e", "staging", "platform", "abc"
	r.Preflight = []Check{{Name: "api", Status: Pass, Reason: "Kubernetes v1.32.2"}, {Name: "nodes", Status: Warn, Reason: "1 of 1 nodes Ready; fewer than 3"}}
	r.Applied = []Applied{{Kind: "WorkflowTemplate", Namespace: "argo", Name: "e2e-deploy", Result: Configured}, {Kind: "ClusterWorkflowTemplate", Name: "deployctl-validate", Result: Unchanged}}
	r.Workflow = &WorkflowRun{Name: "e2e-deploy-x1", Namespace: "argo", Decision: "resume", Reason: "the last run failed", Phase: "Failed",
		ResetNodes: []string{"catalog", "gateway"}, KeptNodes: []string{"db"}}
	r.Components = []Component{
		{Name: "db", Stack: "data", Status: CompKept, Health: "Healthy", Sync: "Synced", DurationSeconds: 12.5},
		{Name: "catalog", Stack: "apps", Status: "Failed", Health: "Degraded", Sync: "Synced", Message: "catalog is Degraded",
			StepResult: &stepresult.Result{Command: "sync-and-wait", ExitCode: 1, Health: "Degraded"}},
		{Name: "gateway", Stack: "apps", Status: CompNotRun, Message: "not run: catalog failed"},
	}
	r.Fail("catalog", "follow", "catalog is Degraded", "Argo CD health Degraded")
	r.Recommend("fix catalog, then run deploy again: it resumes from catalog")
	r.Health = "Degraded"
	r.Finish(exitcode.Failure, StatusFailed, "e2e-deploy-x1 failed at catalog", map[string]int{"follow": 1})
	return r
}

func TestReportJSONAndSummary(t *testing.T) {
	r := sampleReport()
	path := filepath.Join(t.TempDir(), "sub", "report.json")
	if err := r.WriteJSON(path); err != nil {
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
	r.WriteText(&text)
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
