package compile

import (
	"fmt"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/internal/duration"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// teardownWorkflowTemplate is the exact reverse of the deploy DAG: an app is
// deleted only after everything that depends on it is gone (INV-5, docs/requirements.md#inv-5-reverse-order-teardown).
//
// Confirmation is enforced twice before anything is deleted: the `confirm`
// parameter's enum admits only the platform name, so Argo refuses the
// submission itself, and every step checks it again.
func teardownWorkflowTemplate(d *dag.DAG, hash string, root *Application, sink *taskSink) (*wfv1.WorkflowTemplate, error) {
	name := d.Platform.Metadata.Name
	add := sink.add
	if root != nil {
		// The root Application goes first and without cascade: it must stop
		// re-creating the children, but must not delete them out of order.
		first, err := teardownTask(name, HandoffTask, &spec.App{Timeouts: &spec.DefaultTimeouts, Retry: &spec.DefaultRetry}, nil, "false")
		if err != nil {
			return nil, err
		}
		first.Arguments.Parameters[0] = param("app", root.Name)
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
	err := eachTask(d, d.Graph.Reverse(), func(n *dag.Node, deps []string) (wfv1.DAGTask, error) {
		return teardownTask(name, n.Name, n.App, deps, "true")
	}, add)
	if err != nil {
		return nil, err
	}
	// No value: a submission without -p confirm=<platform> is refused as
	// "value is required", a wrong one as "not in enum".
	confirm := wfv1.Parameter{
		Name:        "confirm",
		Enum:        []wfv1.AnyString{wfv1.AnyString(name)},
		Description: wfv1.AnyStringPtr("must equal the platform name (" + name + ") to delete anything"),
	}
	pv := wfv1.Parameter{
		Name:        "pv-policy",
		Value:       wfv1.AnyStringPtr("retain"),
		Enum:        []wfv1.AnyString{"retain", "delete"},
		Description: wfv1.AnyStringPtr("retain (default) keeps PersistentVolumeClaims; delete removes them with their app"),
	}
	crd := wfv1.Parameter{
		Name:        "crd-policy",
		Value:       wfv1.AnyStringPtr("retain"),
		Enum:        []wfv1.AnyString{"retain", "delete"},
		Description: wfv1.AnyStringPtr("retain (default) keeps the CustomResourceDefinitions Argo CD never deletes; delete removes them, and every custom resource of their kinds, with their app"),
	}
	main := wfv1.Template{Name: string(dag.Teardown), DAG: &wfv1.DAGTemplate{}}
	return workflowTemplate(d.Platform, string(dag.Teardown), hash, []wfv1.Parameter{confirm, pv, crd}, main, sink.join), nil
}

// teardownTask deletes one app; its timeout is the app's sync plus health
// timeout, the time its resources had to come up.
func teardownTask(platform, name string, a *spec.App, deps []string, cascade string) (wfv1.DAGTask, error) {
	timeout, err := duration.Sum(a.Timeouts.Sync.Duration, a.Timeouts.Health.Duration)
	var deadline time.Duration
	if err == nil {
		deadline, err = duration.Sum(timeout, deadlineSlack)
	}
	if err != nil {
		return wfv1.DAGTask{}, fmt.Errorf("app %s: its teardown deadline: %w", name, err)
	}
	args := []wfv1.Parameter{
		param("app", name),
		param("platform", platform),
		param("confirm", "{{workflow.parameters.confirm}}"),
		param("pv-policy", "{{workflow.parameters.pv-policy}}"),
		param("crd-policy", "{{workflow.parameters.crd-policy}}"),
		param("timeout", timeout.String()),
		param("deadline-seconds", seconds(deadline)),
	}
	if cascade != "true" {
		args = append(args, param("cascade", cascade))
	}
	args = append(args, appNamespaceArg(a)...)
	args = append(args, retryArgs(a.Retry)...)
	return wfv1.DAGTask{
		Name:        name,
		TemplateRef: templateRef(CWTTeardown, tmplTeardown),
		Depends:     depends(deps),
		Arguments:   wfv1.Arguments{Parameters: args},
	}, nil
}
