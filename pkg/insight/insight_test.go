package insight

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/livestate"
	"github.com/deployctl/deployctl/pkg/livestate/livestatetest"
)

var now = time.Date(2026, 1, 1, 10, 5, 0, 0, time.UTC)

// minimal compiles examples/minimal.yaml: the WorkflowTemplates the runs
// of the fixtures were made from.
func minimal(t *testing.T) *compile.Output {
	t.Helper()
	d, err := dag.Load("../../examples/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := compile.Compile(d, "platform")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// workflow reads a Workflow fixture (a path from this package), with the
// WorkflowTemplate Argo stores in its status when stored is not nil.
func workflow(t *testing.T, file string, stored *wfv1.WorkflowTemplate) *wfv1.Workflow {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var wf wfv1.Workflow
	if err := yaml.UnmarshalStrict(data, &wf); err != nil {
		t.Fatal(err)
	}
	return withStored(&wf, stored)
}

// failedDeploy is the failed deploy run every reader of a run is tested on
// (package livestatetest), with a stored template when stored is not nil.
func failedDeploy(t *testing.T, stored *wfv1.WorkflowTemplate) *wfv1.Workflow {
	return withStored(livestatetest.FailedDeploy(t), stored)
}

func withStored(wf *wfv1.Workflow, stored *wfv1.WorkflowTemplate) *wfv1.Workflow {
	if stored != nil {
		wf.Status.StoredWorkflowSpec = stored.Spec.DeepCopy()
	}
	return wf
}

// app is an Argo CD Application as its controller reports it.
func app(name, sync, health, healthMsg, opPhase string, problems ...map[string]any) *unstructured.Unstructured {
	status := map[string]any{
		"sync":   map[string]any{"status": sync},
		"health": map[string]any{"status": health, "message": healthMsg},
	}
	if opPhase != "" {
		status["operationState"] = map[string]any{"phase": opPhase, "message": "op " + opPhase}
	}
	if len(problems) > 0 {
		var res []any
		for _, p := range problems {
			res = append(res, p)
		}
		status["resources"] = res
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": name, "namespace": "argocd"},
		"status":   status,
	}}
}

func clients(wfObjs []runtime.Object, apps ...*unstructured.Unstructured) *kube.Clients {
	var objs []runtime.Object
	for _, a := range apps {
		objs = append(objs, a)
	}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{livestate.GVRApplication: "ApplicationList"}, objs...)
	return &kube.Clients{Workflows: wffake.NewSimpleClientset(wfObjs...), Dynamic: dyn}
}

var rolloutProblem = map[string]any{"kind": "Deployment", "namespace": "ingress-nginx", "name": "ingress-nginx-controller",
	"health": map[string]any{"status": "Progressing", "message": "0 of 2 updated replicas are available"}}

func runningDeploy(t *testing.T, ingress *unstructured.Unstructured) *Run {
	t.Helper()
	out := minimal(t)
	wf := workflow(t, "testdata/running-deploy.yaml", out.WorkflowTemplates[dag.Deploy])
	cl := clients([]runtime.Object{wf}, app("cert-manager", "Synced", "Healthy", "", "Succeeded"), ingress)
	r, err := Load(context.Background(), cl, Options{Namespace: "argo", Workflow: wf.Name, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestStatusOfARunningDeploy(t *testing.T) {
	r := runningDeploy(t, app("ingress-nginx", "Synced", "Progressing", "Waiting for rollout to finish", "Succeeded", rolloutProblem))
	want := map[string]struct {
		state   string
		seconds float64
		waits   string
	}{
		"cert-manager":  {Healthy, 40, ""},
		"ingress-nginx": {WaitingHealth, 300, ""},
		"base":          {Waiting, 0, "ingress-nginx"},
		"database":      {Waiting, 0, "ingress-nginx"},          // through the join of stack base
		"web":           {Waiting, 0, "ingress-nginx,database"}, // the join, and its own dependency
	}
	for name, w := range want {
		n := r.Node(name)
		if n == nil || n.State != w.state || n.Seconds != w.seconds || strings.Join(n.WaitingFor, ",") != w.waits {
			t.Errorf("%s: %+v, want %+v", name, n, w)
		}
	}
	if n := r.Node("ingress-nginx"); n.Attempts != 2 || n.ArgoCD.Health != "Progressing" {
		t.Errorf("ingress-nginx: %+v %+v", n, n.ArgoCD)
	}
	if r.Action != "deploy" || r.Platform != "minimal" || r.ArgoCDNamespace != "argocd" || r.Seconds != 300 {
		t.Errorf("run %+v", r)
	}

	var out bytes.Buffer
	if err := r.WriteStatus(&out, "text"); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"deploy of minimal: workflow argo/minimal-deploy-r2 Running for 5m0s\n",
		"  1 Healthy · 1 waiting for health · 2 waiting\n",
		"cert-manager                 Healthy                   40.0s  Synced/Healthy\n",
		"ingress-nginx                waiting for health #2      5m0s  Synced/Progressing: Waiting for rollout to finish\n",
		"database                     waiting" + strings.Repeat(" ", 26) + "waits for ingress-nginx\n",
		"web                          waiting" + strings.Repeat(" ", 26) + "waits for ingress-nginx, database\n",
		"Holding back the waiting apps:\n  ingress-nginx (waiting for health for 5m0s): Synced/Progressing: Waiting for rollout to finish\n" +
			"      Deployment ingress-nginx/ingress-nginx-controller Progressing: 0 of 2 updated replicas are available\n" +
			"      holds back database, web\n  database (waiting): waits for ingress-nginx\n      holds back web\n",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("status lacks %q:\n%s", line, out.String())
		}
	}
}

func TestExplainAWaitingApp(t *testing.T) {
	r := runningDeploy(t, app("ingress-nginx", "Synced", "Progressing", "Waiting for rollout to finish", "Succeeded", rolloutProblem))
	e, err := r.Explain("web")
	if err != nil {
		t.Fatal(err)
	}
	if e.Summary != "web is not deploying yet: it waits until ingress-nginx, database are Healthy" {
		t.Errorf("summary %q", e.Summary)
	}
	if len(e.Causes) != 1 || e.Causes[0].Node.Name != "ingress-nginx" || strings.Join(e.Causes[0].Path, " ← ") != "web ← stack base ← ingress-nginx" {
		t.Errorf("causes %+v", e.Causes)
	}
	text := explainText(t, e, r)
	for _, s := range []string{
		"It waits for:\n  ingress-nginx              waiting for health for 5m0s · Argo CD Synced/Progressing: Waiting for rollout to finish\n" +
			"      Deployment ingress-nginx/ingress-nginx-controller Progressing: 0 of 2 updated replicas are available\n" +
			"  database                   waiting\n",
		"What holds the chain back:\n  ingress-nginx              waiting for health for 5m0s · Argo CD Synced/Progressing: Waiting for rollout to finish\n" +
			"      Deployment ingress-nginx/ingress-nginx-controller Progressing: 0 of 2 updated replicas are available\n      web ← stack base ← ingress-nginx\n",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("explain web lacks %q:\n%s", s, text)
		}
	}
	if lines := strings.Count(text, "\n"); lines > 24 {
		t.Errorf("%d lines: not one screen", lines)
	}

	e, _ = r.Explain("ingress-nginx")
	if e.Summary != "ingress-nginx is waiting for health for 5m0s (attempt 2)" || strings.Join(e.Affected, ",") != "database,web" {
		t.Errorf("%q %v", e.Summary, e.Affected)
	}
	if text := explainText(t, e, r); !strings.Contains(text, "  Argo CD now: Synced/Progressing: Waiting for rollout to finish\n") || !strings.Contains(text, "Waiting for it: database, web") {
		t.Error(text)
	}
}

func explainText(t *testing.T, e *Explanation, r *Run) string {
	t.Helper()
	var out bytes.Buffer
	if err := e.Write(&out, r, "text"); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// The state of a running node comes from Argo CD: creating (no
// Application yet), syncing (an operation running), waiting for health,
// checking (Healthy: the step confirms it); and a waiting node whose
// dependencies are all done is ready.
func TestRunningStates(t *testing.T) {
	for _, tc := range []struct {
		app   *unstructured.Unstructured
		state string
	}{
		{app("other", "", "", "", ""), Creating},
		{app("ingress-nginx", "OutOfSync", "Missing", "", "Running"), Syncing},
		{app("ingress-nginx", "Synced", "Degraded", "CrashLoopBackOff", "Succeeded"), WaitingHealth},
		{app("ingress-nginx", "Synced", "Healthy", "", "Succeeded"), Checking},
	} {
		r := runningDeploy(t, tc.app)
		if got := r.Node("ingress-nginx").State; got != tc.state {
			t.Errorf("%v: %s, want %s", tc.app.Object["status"], got, tc.state)
		}
	}

	out := minimal(t)
	wf := workflow(t, "testdata/running-deploy.yaml", out.WorkflowTemplates[dag.Deploy])
	n := wf.Status.Nodes["minimal-deploy-r2-3"]
	n.Phase, n.FinishedAt = wfv1.NodeSucceeded, metav1.NewTime(now)
	wf.Status.Nodes["minimal-deploy-r2-3"] = n
	r, err := Load(context.Background(), clients([]runtime.Object{wf}), Options{Namespace: "argo", Workflow: wf.Name, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := r.Explain("database")
	if !strings.HasPrefix(e.Summary, "database is ready: everything it depends on is done") || len(e.WaitingFor) != 0 {
		t.Errorf("%q %v", e.Summary, e.WaitingFor)
	}
	e, _ = r.Explain("web")
	if len(e.Causes) != 1 || e.Causes[0].Node.Name != "database" {
		t.Errorf("web's causes %+v", e.Causes)
	}
}

// A finished, failed run: why it failed and what was omitted because of
// it. Its template is read from the WorkflowTemplate it references.
func TestExplainAFailedRun(t *testing.T) {
	out := minimal(t)
	wf := failedDeploy(t, nil)
	cl := clients([]runtime.Object{wf, out.WorkflowTemplates[dag.Deploy]},
		app("database", "Synced", "Degraded", "0/1 ready", "Succeeded",
			map[string]any{"kind": "StatefulSet", "namespace": "app", "name": "database", "health": map[string]any{"status": "Degraded", "message": "0/1 ready"}}))
	r, err := Load(context.Background(), cl, Options{Namespace: "argo", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if r.Workflow != "minimal-deploy-x1" || r.Seconds != 180 {
		t.Fatalf("run %s, %vs", r.Workflow, r.Seconds)
	}
	db, web := r.Node("database"), r.Node("web")
	if db.State != Failed || db.Seconds != 137 || db.Message != "database is Degraded after sync: StatefulSet app/database: 0/1 ready" {
		t.Errorf("database %+v", db)
	}
	if web.State != Omitted || strings.Join(web.BlockedBy, ",") != "database" || web.Seconds != 0 {
		t.Errorf("web %+v", web)
	}

	e, err := r.Explain("web")
	if err != nil {
		t.Fatal(err)
	}
	text := explainText(t, e, r)
	for _, s := range []string{
		"deploy of minimal: workflow argo/minimal-deploy-x1 Failed after 3m0s (child 'minimal-deploy-x1-4' failed)\n",
		"web was never deployed: database failed, and it depends on it\n",
		"Because of:\n  database                   failed after 2m17s: database is Degraded after sync: StatefulSet app/database: 0/1 ready\n      web ← database\n",
		"      - unhealthy StatefulSet app/database (Degraded: 0/1 ready)\n",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("explain web lacks %q:\n%s", s, text)
		}
	}

	e, _ = r.Explain("database")
	text = explainText(t, e, r)
	for _, s := range []string{
		"database failed after 2m17s: database is Degraded after sync",
		"  Argo CD now: Synced/Degraded: 0/1 ready\n    StatefulSet app/database Degraded: 0/1 ready\n",
		"  - Argo CD health Degraded: 0/1 ready, sync Synced, operation Succeeded\n",
		"Not run because of it: web\n",
		"`deployctl deploy` again: it resumes this run",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("explain database lacks %q:\n%s", s, text)
		}
	}

	var js bytes.Buffer
	if err := e.Write(&js, r, "json"); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Node     Node     `json:"node"`
		Affected []string `json:"affected"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Node.State != Failed || back.Affected[0] != "web" {
		t.Errorf("json: %v %+v", err, back)
	}
}

func TestExplainTeardown(t *testing.T) {
	out := minimal(t)
	wf := workflow(t, "testdata/running-teardown.yaml", out.WorkflowTemplates[dag.Teardown])
	r, err := Load(context.Background(), clients([]runtime.Object{wf}, app("database", "Synced", "Healthy", "", "")),
		Options{Namespace: "argo", Platform: "minimal", Now: time.Date(2026, 1, 1, 11, 1, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Node("web").State != Deleted || r.Node("database").State != Deleting {
		t.Errorf("web %s, database %s", r.Node("web").State, r.Node("database").State)
	}
	e, _ := r.Explain("cert-manager")
	if e.Summary != "cert-manager is not deleted yet: it goes after what depends on it, and database is still there" {
		t.Errorf("%q", e.Summary)
	}

	// The deletion of database fails: what it depends on is never deleted.
	n := wf.Status.Nodes["minimal-teardown-t1-2"]
	n.Phase, n.Message = wfv1.NodeFailed, "teardown failed"
	wf.Status.Nodes["minimal-teardown-t1-2"] = n
	wf.Status.Phase = wfv1.WorkflowFailed
	r, err = Load(context.Background(), clients([]runtime.Object{wf}), Options{Namespace: "argo", Workflow: wf.Name})
	if err != nil {
		t.Fatal(err)
	}
	e, _ = r.Explain("ingress-nginx")
	if r.Node("ingress-nginx").State != Omitted ||
		e.Summary != "ingress-nginx was never deleted: database failed, and it goes only after them (what depends on an app is deleted first)" ||
		strings.Join(e.Causes[0].Path, " ← ") != "ingress-nginx ← stack base ← database" {
		t.Errorf("%s: %q %+v", r.Node("ingress-nginx").State, e.Summary, e.Causes)
	}
}

// Without a name, the latest deploy or teardown run of the platform;
// validate runs (every 15 minutes) do not hide it.
func TestLatestRun(t *testing.T) {
	out := minimal(t)
	failed := failedDeploy(t, out.WorkflowTemplates[dag.Deploy])
	running := workflow(t, "testdata/running-deploy.yaml", out.WorkflowTemplates[dag.Deploy])
	validate := running.DeepCopy()
	validate.Name, validate.Labels = "minimal-validate-v9", map[string]string{compile.LabelPlatform: "minimal", compile.LabelAction: "validate"}
	validate.CreationTimestamp = metav1.NewTime(now)
	other := running.DeepCopy()
	other.Name, other.Labels = "other-deploy-z", map[string]string{compile.LabelPlatform: "other", compile.LabelAction: "deploy"}
	other.CreationTimestamp = metav1.NewTime(now)
	cl := clients([]runtime.Object{failed, running, validate, other})
	r, err := Load(context.Background(), cl, Options{Namespace: "argo", Platform: "minimal", Now: now})
	if err != nil || r.Workflow != "minimal-deploy-r2" {
		t.Errorf("%v %v", r, err)
	}
	if _, err := Load(context.Background(), cl, Options{Namespace: "argo", Platform: "nope"}); err == nil || !strings.Contains(err.Error(), "no platform nope's deploy or teardown workflow in namespace argo") {
		t.Errorf("err %v", err)
	}
	// No stored template and no WorkflowTemplate: said so.
	bare := failedDeploy(t, nil)
	if _, err := Load(context.Background(), clients([]runtime.Object{bare}), Options{Namespace: "argo", Workflow: bare.Name}); err == nil ||
		!strings.Contains(err.Error(), "reading WorkflowTemplate argo/minimal-deploy of minimal-deploy-x1") {
		t.Errorf("err %v", err)
	}
	r, _ = Load(context.Background(), cl, Options{Namespace: "argo", Workflow: "minimal-deploy-r2", Now: now})
	if _, err := r.Explain("base"); err == nil || !strings.Contains(err.Error(), "base is not an app of workflow minimal-deploy-r2 (deploy of minimal); its apps: cert-manager, ingress-nginx, database, web") {
		t.Errorf("err %v", err)
	}
}

func TestTaskDeps(t *testing.T) {
	for depends, want := range map[string]string{
		"":                             "",
		"a.Succeeded && b-c.Succeeded": "a,b-c",
		"(a.Succeeded || a.Skipped) && !b.Failed": "a,b",
		"x": "x",
	} {
		if got := strings.Join(taskDeps(wfv1.DAGTask{Depends: depends}), ","); got != want {
			t.Errorf("%q: %s, want %s", depends, got, want)
		}
	}
	if got := taskDeps(wfv1.DAGTask{Dependencies: []string{"b", "a"}}); strings.Join(got, ",") != "a,b" {
		t.Error(got)
	}
}

// An inline run (deployctl's WORKFLOW_SUBMIT=inline: no workflowTemplateRef,
// nothing stored in its status) is read from its own spec: with no
// WorkflowTemplate in the cluster, status and explain see the same DAG as
// for the run by reference.
func TestInlineRun(t *testing.T) {
	out := minimal(t)
	wf := failedDeploy(t, nil)
	wf.Spec = *out.WorkflowTemplates[dag.Deploy].Spec.DeepCopy()
	r, err := Load(context.Background(), clients([]runtime.Object{wf}), Options{Namespace: "argo", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	web := r.Node("web")
	if web == nil || web.State != Omitted || strings.Join(web.BlockedBy, ",") != "database" {
		t.Errorf("web %+v", web)
	}
	wf.Spec = wfv1.WorkflowSpec{}
	if _, err := Load(context.Background(), clients([]runtime.Object{wf}), Options{Namespace: "argo", Now: now}); err == nil {
		t.Error("a run with neither a spec nor a reference was read")
	}
}
