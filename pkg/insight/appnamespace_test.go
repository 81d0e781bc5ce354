package insight

import (
	"context"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/deployctl/deployctl/pkg/dag"
)

// A task with app-namespace (an app's applicationNamespace) is judged by
// the Application in that namespace, not by one of the same name in Argo
// CD's namespace.
func TestStatusOfAnAppInItsNamespace(t *testing.T) {
	out := minimal(t)
	tmpl := out.WorkflowTemplates[dag.Deploy].DeepCopy()
	tasks := tmpl.Spec.Templates[0].DAG.Tasks
	found := false
	for i := range tasks {
		if tasks[i].Name == "cert-manager" {
			tasks[i].Arguments.Parameters = append(tasks[i].Arguments.Parameters,
				wfv1.Parameter{Name: "app-namespace", Value: wfv1.AnyStringPtr("team-a")})
			found = true
		}
	}
	if !found {
		t.Fatal("no cert-manager task in examples/minimal.yaml's deploy")
	}
	wf := workflow(t, "testdata/running-deploy.yaml", tmpl)
	mine := app("cert-manager", "Synced", "Healthy", "", "Succeeded")
	mine.SetNamespace("team-a")
	other := app("cert-manager", "OutOfSync", "Degraded", "not this one", "")
	r, err := Load(context.Background(), clients([]runtime.Object{wf}, mine, other), Options{Namespace: "argo", Workflow: wf.Name, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	n := r.Node("cert-manager")
	if n.AppNamespace != "team-a" || n.ArgoCD == nil || !n.ArgoCD.Exists || n.ArgoCD.Health != "Healthy" {
		t.Errorf("cert-manager: namespace %q, Argo CD %+v", n.AppNamespace, n.ArgoCD)
	}
}
