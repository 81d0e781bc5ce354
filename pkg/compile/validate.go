package compile

import (
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// validateWorkflowTemplate checks health read-only: one task per stack, all
// in parallel, each reporting its apps' health and their aggregate (RFC 5.5).
// Any stack not Healthy fails its task, and so the workflow.
func validateWorkflowTemplate(d *dag.DAG, hash string) (*wfv1.WorkflowTemplate, error) {
	var tasks []wfv1.DAGTask
	for _, s := range d.Stacks() {
		apps := d.StackApps(s)
		if len(apps) == 0 {
			continue
		}
		tasks = append(tasks, wfv1.DAGTask{
			Name:        s,
			TemplateRef: templateRef(CWTValidate, tmplValidate),
			Arguments: wfv1.Arguments{Parameters: append([]wfv1.Parameter{
				param("apps", strings.Join(apps, "\n")),
			}, retryArgs(&spec.DefaultRetry)...)},
		})
	}
	main := wfv1.Template{Name: string(dag.Validate), DAG: &wfv1.DAGTemplate{Tasks: tasks}}
	return workflowTemplate(d.Platform, string(dag.Validate), hash, nil, main), nil
}
