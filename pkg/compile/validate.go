package compile

import (
	"fmt"
	"maps"
	"slices"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// validateWorkflowTemplate checks health read-only: one task per stack, all
// in parallel, each reporting its apps' health and their aggregate (RFC 5.5, docs/requirements.md#rfc-55-aggregate-health).
// Any stack not Healthy fails its task, and so the workflow. A step
// addresses Applications of one namespace, so a stack's apps with their
// own applicationNamespace get a task per namespace, STACK-in-NAMESPACE.
func validateWorkflowTemplate(d *dag.DAG, hash string, sink *taskSink) (*wfv1.WorkflowTemplate, error) {
	// Validate's tasks retry as built in (they only read): its workflow
	// parameters say so, and no task passes a retry.
	extra, err := platformParams(&stepcontract.Validate{Retry: retryOf(&spec.DefaultRetry)})
	if err != nil {
		return nil, err
	}
	wf := paramValues(append(connectionParams(d.Platform), extra...))
	names := map[string]bool{}
	for _, s := range d.Stacks() {
		names[s] = true
	}
	for _, s := range d.Stacks() {
		byNS := map[string][]string{}
		for _, a := range d.StackApps(s) {
			ns := d.Node(a).App.ApplicationNamespace
			if !otherNamespace(d.Platform, d.Node(a).App) {
				ns = ""
			}
			byNS[ns] = append(byNS[ns], a)
		}
		for _, ns := range slices.Sorted(maps.Keys(byNS)) {
			name := s
			if ns != "" {
				name = s + "-in-" + ns
				if names[name] {
					return nil, fmt.Errorf("validate: the task of stack %s's apps in namespace %s would be named %s, as a stack is: rename the stack", s, ns, name)
				}
				names[name] = true
			}
			t, err := stepTask(name, &stepcontract.Validate{Apps: byNS[ns], AppNamespace: ns, Retry: retryOf(&spec.DefaultRetry)}, nil, wf)
			if err == nil {
				err = sink.add(t)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	main := wfv1.Template{Name: string(dag.Validate), DAG: &wfv1.DAGTemplate{}}
	return workflowTemplate(d.Platform, string(dag.Validate), hash, extra, main, sink.join), nil
}
