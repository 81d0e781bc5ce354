package compile

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
)

// dependsOn splits an Argo depends expression of "X.Succeeded && …" into X….
func dependsOn(t *testing.T, expr string) []string {
	t.Helper()
	if expr == "" {
		return nil
	}
	var out []string
	for _, part := range strings.Split(expr, " && ") {
		name, ok := strings.CutSuffix(part, ".Succeeded")
		if !ok {
			t.Fatalf("depends %q: %q does not require Succeeded", expr, part)
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Teardown is the deploy DAG reversed, edge for edge: a node is deleted only
// after every node that waited for it in deploy is gone. The root
// Application goes first, without cascade, and everything that waited for
// nothing else waits for it.
func TestTeardownReversesDeploy(t *testing.T) {
	out := shop(t)
	deploy, _ := tasksByName(t, out.WorkflowTemplates[dag.Deploy])
	teardown, order := tasksByName(t, out.WorkflowTemplates[dag.Teardown])

	want := map[string][]string{}
	for name, task := range deploy {
		if name == HandoffTask {
			continue
		}
		if _, ok := want[name]; !ok {
			want[name] = nil // a source of teardown: it waits for the handoff
		}
		for _, dep := range dependsOn(t, task.Depends) {
			want[dep] = append(want[dep], name)
		}
	}
	for name, deps := range want {
		if len(deps) == 0 {
			want[name] = []string{HandoffTask}
		}
		sort.Strings(want[name])
	}
	want[HandoffTask] = nil
	if len(teardown) != len(want) {
		t.Fatalf("teardown tasks %v, want %d", order, len(want))
	}
	for name, deps := range want {
		task, ok := teardown[name]
		if !ok {
			t.Errorf("teardown has no task %s", name)
			continue
		}
		if got := dependsOn(t, task.Depends); !slices.Equal(got, deps) {
			t.Errorf("teardown %s waits for %v, want %v", name, got, deps)
		}
	}
	if order[0] != HandoffTask {
		t.Errorf("teardown does not start with the handoff: %v", order)
	}
	root := effective(t, out, teardown[HandoffTask])
	if root["app"] != out.Root.Name || root["cascade"] != "false" {
		t.Errorf("root teardown deletes %q with cascade %q, want %q without cascade", root["app"], root["cascade"], out.Root.Name)
	}
	if db := effective(t, out, teardown["db"]); db["cascade"] != "true" || db["timeout"] != "10m0s" {
		t.Errorf("db teardown: cascade %q, timeout %q; want true and its sync+health 10m0s", db["cascade"], db["timeout"])
	}
}

// Nothing is deleted without the platform's name: confirm has no default
// and admits only that name; the volume and CRD policies default to retain.
func TestTeardownConfirmation(t *testing.T) {
	out := shop(t)
	params := map[string]int{}
	spec := out.WorkflowTemplates[dag.Teardown].Spec.Arguments.Parameters
	for i, p := range spec {
		params[p.Name] = i
	}
	confirm := spec[params["confirm"]]
	if confirm.Name != "confirm" || confirm.Value != nil || len(confirm.Enum) != 1 || confirm.Enum[0] != "shop" {
		t.Errorf("confirm = %+v, want no value and enum [shop]", confirm)
	}
	for _, name := range []string{"pv-policy", "crd-policy"} {
		p := spec[params[name]]
		if p.Name != name || p.Value == nil || p.Value.String() != "retain" {
			t.Errorf("%s = %+v, want default retain", name, p)
		}
	}
	tasks, _ := tasksByName(t, out.WorkflowTemplates[dag.Teardown])
	for name, task := range tasks {
		if task.TemplateRef == nil {
			continue // a join
		}
		if got := effective(t, out, task)["confirm"]; got != "{{workflow.parameters.confirm}}" {
			t.Errorf("teardown %s gets confirm %q, not the workflow's", name, got)
		}
		for _, in := range []string{"confirm", "pv-policy", "crd-policy", "platform"} {
			if v, ok := args(task)[in]; ok {
				t.Errorf("teardown %s passes %s %q: the input's default is the workflow's", name, in, v)
			}
		}
	}
}
