package compile

import (
	"strconv"
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// Validate is one read-only task per stack, all in parallel; a stack's apps
// whose Applications live in another namespace get a task of their own
// (STACK-in-NAMESPACE), since one step reads one namespace. Each retries
// with the default policy.
func TestValidateTasks(t *testing.T) {
	out := shop(t)
	tasks, order := tasksByName(t, out.WorkflowTemplates[dag.Validate])
	want := map[string]map[string]string{
		"base":           {"apps": "cache\ndb", "app-namespace": "{{workflow.parameters.argocd-namespace}}"},
		"apps":           {"apps": "worker", "app-namespace": "{{workflow.parameters.argocd-namespace}}"},
		"apps-in-team-a": {"apps": "api", "app-namespace": "team-a"},
	}
	if len(tasks) != len(want) {
		t.Fatalf("validate tasks %v, want %d", order, len(want))
	}
	r := spec.DefaultRetry
	for name, w := range want {
		task, ok := tasks[name]
		if !ok {
			t.Errorf("no validate task %s", name)
			continue
		}
		if task.Depends != "" {
			t.Errorf("validate %s waits for %q; validate tasks run in parallel", name, task.Depends)
		}
		if task.TemplateRef == nil || task.TemplateRef.Name != CWTValidate {
			t.Errorf("validate %s calls %v", name, task.TemplateRef)
		}
		got := effective(t, out, task)
		w["retry-limit"], w["retry-backoff"], w["retry-factor"] = strconv.Itoa(r.Limit), r.Backoff.Duration.String(), strconv.Itoa(r.Factor)
		for k, v := range w {
			if got[k] != v {
				t.Errorf("validate %s: %s = %q, want %q", name, k, got[k], v)
			}
		}
	}
}
