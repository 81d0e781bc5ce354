package compile

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
)

// The deploy DAG waits only for direct dependencies: an app for the apps it
// names, a stack's join for its apps, an app of a dependent stack for that
// join, and the handoff for the sinks. Every task comes after what it waits
// for, and nothing waits for an unrelated node.
func TestDeployDependencies(t *testing.T) {
	out := shop(t)
	tasks, order := tasksByName(t, out.WorkflowTemplates[dag.Deploy])
	want := map[string]string{
		"cache":     "",
		"db":        "",
		"base":      "cache.Succeeded && db.Succeeded",
		"worker":    "base.Succeeded",
		"api":       "base.Succeeded && worker.Succeeded",
		"apps":      "api.Succeeded && worker.Succeeded",
		HandoffTask: "apps.Succeeded",
	}
	if len(tasks) != len(want) {
		t.Fatalf("deploy tasks %v, want %d", order, len(want))
	}
	for name, deps := range want {
		if got := tasks[name].Depends; got != deps {
			t.Errorf("%s depends %q, want %q", name, got, deps)
		}
	}
	pos := map[string]int{}
	for i, n := range order {
		pos[n] = i
	}
	for name, g := range map[string][]string{"base": {"cache", "db"}, "worker": {"base"}, "api": {"base", "worker"}, "apps": {"api", "worker"}, HandoffTask: {"apps"}} {
		for _, dep := range g {
			if pos[dep] > pos[name] {
				t.Errorf("task %s comes before its dependency %s: %v", name, dep, order)
			}
		}
	}
	if order[len(order)-1] != HandoffTask {
		t.Errorf("the handoff is not last: %v", order)
	}
	for _, join := range []string{"base", "apps"} {
		if tasks[join].Template != tmplJoin || tasks[join].TemplateRef != nil {
			t.Errorf("join %s runs %q/%v, want the pod-less %s", join, tasks[join].Template, tasks[join].TemplateRef, tmplJoin)
		}
	}
}

// Each app's task carries the app's own settings: timeouts and the hard
// deadline (sync + health + slack), extra checks, allowSuspended, its
// Application namespace, its retry policy, and its Application manifest.
func TestDeployTaskArguments(t *testing.T) {
	out := shop(t)
	tasks, _ := tasksByName(t, out.WorkflowTemplates[dag.Deploy])
	for name, want := range map[string]map[string]string{
		"db":     {"app": "db", "sync-timeout": "2m0s", "health-timeout": "8m0s", "deadline-seconds": "720", "allow-suspended": "false", "checks": "", "app-namespace": "{{workflow.parameters.argocd-namespace}}", "retry-limit": "4", "retry-backoff": "15s", "retry-factor": "3"},
		"cache":  {"app": "cache", "sync-timeout": "3m0s", "health-timeout": "4m0s", "deadline-seconds": "540", "allow-suspended": "true", "checks": ""},
		"api":    {"app": "api", "app-namespace": "team-a", "checks": "http:http://api.shop.svc:8080/healthz=200,204", "allow-suspended": "false"},
		"worker": {"app": "worker", "retry-limit": "1", "retry-backoff": "5s"},
	} {
		got := effective(t, out, tasks[name])
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", name, k, got[k], v)
			}
		}
		raw, err := base64.StdEncoding.DecodeString(got["manifest-base64"])
		if err != nil {
			t.Fatalf("%s: manifest-base64: %v", name, err)
		}
		var app Application
		if err := json.Unmarshal(raw, &app); err != nil {
			t.Fatalf("%s: manifest: %v", name, err)
		}
		if app.Name != name {
			t.Errorf("%s's task carries the manifest of Application %q", name, app.Name)
		}
	}
	handoff := effective(t, out, tasks[HandoffTask])
	if out.Root == nil || handoff["app"] != out.Root.Name {
		t.Errorf("the handoff syncs %q, want the root Application", handoff["app"])
	}
}

// The platform's default timeouts are the deploy's workflow parameters
// (issue 24): a task with its own passes them, one with the platform's
// passes none (the template's inputs default to the workflow's), and the
// handoff, on the built-in timeouts, passes them as they differ from
// shop's defaults (3m, 4m).
func TestDeployPassesOnlyTimeoutsThatDiffer(t *testing.T) {
	out := shop(t)
	wt := out.WorkflowTemplates[dag.Deploy]
	wf := paramValues(wt.Spec.Arguments.Parameters)
	for k, v := range map[string]string{"default-sync-timeout": "3m0s", "default-health-timeout": "4m0s", "default-deadline-seconds": "540"} {
		if wf[k] != v {
			t.Errorf("the deploy's workflow parameter %s = %q, want %q (spec.defaults.timeouts)", k, wf[k], v)
		}
	}
	tasks, _ := tasksByName(t, wt)
	timeouts := []string{"sync-timeout", "health-timeout", "deadline-seconds"}
	for name, passes := range map[string]bool{"db": true, "cache": false, "api": false, "worker": false, HandoffTask: true} {
		a := args(tasks[name])
		for _, in := range timeouts {
			if _, ok := a[in]; ok != passes {
				t.Errorf("%s passes %s: %v, want %v", name, in, ok, passes)
			}
		}
	}
	if got := effective(t, out, tasks[HandoffTask]); got["sync-timeout"] != "5m0s" || got["deadline-seconds"] != "720" {
		t.Errorf("the handoff gets %s, %s s, want the built-in 5m0s, 720", got["sync-timeout"], got["deadline-seconds"])
	}
	td := out.WorkflowTemplates[dag.Teardown]
	twf := paramValues(td.Spec.Arguments.Parameters)
	if twf["default-timeout"] != "7m0s" || twf["default-deadline-seconds"] != "540" || twf["platform"] != "shop" {
		t.Errorf("the teardown's platform parameters %v", twf)
	}
	ttasks, _ := tasksByName(t, td)
	if a := args(ttasks["db"]); a["timeout"] != "10m0s" || a["deadline-seconds"] != "720" {
		t.Errorf("db's teardown passes %v, want its own timeout 10m0s and deadline 720", a)
	}
	if a := args(ttasks["cache"]); len(a) != 1 || a["app"] != "cache" {
		t.Errorf("cache's teardown passes %v, want only its app", a)
	}
}
