package compile

import (
	"fmt"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// teardownWorkflowTemplate is the exact reverse of the deploy DAG: an app is
// deleted only after everything that depends on it is gone (INV-5, docs/requirements.md#inv-5-reverse-order-teardown).
//
// Confirmation is enforced twice before anything is deleted: the `confirm`
// parameter's enum admits only the platform name, so Argo refuses the
// submission itself, and every step checks it again.
func teardownWorkflowTemplate(d *dag.DAG, hash string, root *Application, sink *taskSink) (*wfv1.WorkflowTemplate, error) {
	name := d.Platform.Metadata.Name
	extra, err := teardownParams(d.Platform)
	if err != nil {
		return nil, err
	}
	wf := paramValues(append(connectionParams(d.Platform), extra...))
	add := sink.add
	if root != nil {
		// The root Application goes first and without cascade: it must stop
		// re-creating the children, but must not delete them out of order.
		first, err := teardownTask(name, HandoffTask, root.Name, &spec.App{Timeouts: &spec.DefaultTimeouts, Retry: &spec.DefaultRetry}, nil, false, wf)
		if err != nil {
			return nil, err
		}
		if err := sink.add(first); err != nil {
			return nil, err
		}
		add = func(t wfv1.DAGTask) error {
			if t.Depends == "" {
				t.Depends = depends([]string{HandoffTask})
			}
			return sink.add(t)
		}
	}
	err = eachTask(d, d.Graph.Reverse(), func(n *dag.Node, deps []string) (wfv1.DAGTask, error) {
		return teardownTask(name, n.Name, n.Name, n.App, deps, true, wf)
	}, add)
	if err != nil {
		return nil, err
	}
	main := wfv1.Template{Name: string(dag.Teardown), DAG: &wfv1.DAGTemplate{}}
	return workflowTemplate(d.Platform, string(dag.Teardown), hash, extra, main, sink.join), nil
}

// teardownParams are the teardown's own workflow parameters: what a
// submission chooses (confirm, pv-policy, crd-policy), then the
// platform's name, default timeout and retry, which its tasks' inputs default to
// (a task passes its own only when it differs; issue 24).
func teardownParams(p *spec.Platform) ([]wfv1.Parameter, error) {
	name := p.Metadata.Name
	// No value: a submission without -p confirm=<platform> is refused as
	// "value is required", a wrong one as "not in enum".
	confirm := wfv1.Parameter{
		Name:        stepcontract.WorkflowConfirm,
		Enum:        []wfv1.AnyString{wfv1.AnyString(name)},
		Description: wfv1.AnyStringPtr("must equal the platform name (" + name + ") to delete anything"),
	}
	pv := wfv1.Parameter{
		Name:        stepcontract.WorkflowPVPolicy,
		Value:       wfv1.AnyStringPtr(stepcontract.PolicyRetain),
		Enum:        []wfv1.AnyString{stepcontract.PolicyRetain, stepcontract.PolicyDelete},
		Description: wfv1.AnyStringPtr("retain (default) keeps PersistentVolumeClaims; delete removes them with their app"),
	}
	crd := wfv1.Parameter{
		Name:        stepcontract.WorkflowCRDPolicy,
		Value:       wfv1.AnyStringPtr(stepcontract.PolicyRetain),
		Enum:        []wfv1.AnyString{stepcontract.PolicyRetain, stepcontract.PolicyDelete},
		Description: wfv1.AnyStringPtr("retain (default) keeps the CustomResourceDefinitions Argo CD never deletes; delete removes them, and every custom resource of their kinds, with their app"),
	}
	def := p.Spec.Defaults.AppTimeouts()
	timeout, err := stepcontract.NodeLimit(def.Sync.Duration, def.Health.Duration)
	if err != nil {
		return nil, fmt.Errorf("spec.defaults.timeouts: the teardown deadline: %w", err)
	}
	retry := p.Spec.Defaults.AppRetry()
	plat, err := platformParams(&stepcontract.Teardown{Platform: name, Timeout: timeout, Retry: retryOf(&retry)})
	if err != nil {
		return nil, fmt.Errorf("spec.defaults.timeouts: %w", err)
	}
	for i := range plat {
		if plat[i].Name == stepcontract.WorkflowPlatform {
			// Its only value: a submission cannot point the steps at
			// another platform.
			plat[i].Enum = []wfv1.AnyString{wfv1.AnyString(name)}
		}
	}
	return append([]wfv1.Parameter{confirm, pv, crd}, plat...), nil
}

// teardownTask deletes one app's Application; its timeout is the app's
// sync plus health timeout, the time its resources had to come up.
func teardownTask(platform, task, app string, a *spec.App, deps []string, cascade bool, wf map[string]string) (wfv1.DAGTask, error) {
	timeout, err := stepcontract.NodeLimit(a.Timeouts.Sync.Duration, a.Timeouts.Health.Duration)
	if err != nil {
		return wfv1.DAGTask{}, fmt.Errorf("app %s: its teardown deadline: %w", task, err)
	}
	return stepTask(task, &stepcontract.Teardown{
		App:          app,
		Platform:     platform,
		Confirm:      stepcontract.FromWorkflow(stepcontract.WorkflowConfirm),
		PVPolicy:     stepcontract.FromWorkflow(stepcontract.WorkflowPVPolicy),
		CRDPolicy:    stepcontract.FromWorkflow(stepcontract.WorkflowCRDPolicy),
		Timeout:      timeout,
		Cascade:      cascade,
		AppNamespace: appNamespaceArg(a),
		Retry:        retryOf(a.Retry),
	}, deps, wf)
}
