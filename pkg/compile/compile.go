package compile

import (
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/dag"
)

// Output is everything the compiler makes for one platform and scope.
type Output struct {
	Platform          string
	Scope             string
	SpecHash          string
	ClusterTemplates  []*wfv1.ClusterWorkflowTemplate
	WorkflowTemplates map[dag.Action]*wfv1.WorkflowTemplate
	Workflows         map[dag.Action]*wfv1.Workflow
	Applications      []*Application // one per app of the deploy scope, in topological order
	Root              *Application   // the GitOps handoff, nil if not configured
	RBAC              []any
	Deploy, Teardown  *dag.DAG // the scoped DAGs the workflows were made from
}

// Actions in output order.
var Actions = []dag.Action{dag.Deploy, dag.Teardown, dag.Validate}

// Compile builds every object of a platform for a scope ("platform",
// "stack:NAME", "app:NAME"): deploy and validate cover the scope and what it
// depends on; teardown covers the scope and what depends on it.
func Compile(d *dag.DAG, scope string) (*Output, error) {
	if scope == "" {
		scope = "platform"
	}
	p := d.Platform
	out := &Output{
		Platform:          p.Metadata.Name,
		Scope:             scope,
		WorkflowTemplates: map[dag.Action]*wfv1.WorkflowTemplate{},
		Workflows:         map[dag.Action]*wfv1.Workflow{},
	}
	var err error
	if out.RBAC, err = rbac(p); err != nil {
		return nil, err
	}
	if out.Deploy, err = d.Scope(scope, dag.Deploy); err != nil {
		return nil, err
	}
	if out.Teardown, err = d.Scope(scope, dag.Teardown); err != nil {
		return nil, err
	}
	if out.SpecHash, err = specHash(d, scope); err != nil {
		return nil, err
	}
	if out.ClusterTemplates, err = ClusterWorkflowTemplates(p.Spec.Workflow); err != nil {
		return nil, err
	}
	if scope == "platform" {
		out.Root = rootApplication(p)
	}

	apps := map[string]*Application{}
	order, err := out.Deploy.Graph.TopoOrder()
	if err != nil {
		return nil, err
	}
	for _, name := range order {
		n := out.Deploy.Node(name)
		if n.Kind != dag.App {
			continue
		}
		app, err := application(p, n.Stack, n.App)
		if err != nil {
			return nil, err
		}
		apps[name] = app
		out.Applications = append(out.Applications, app)
	}

	deploy, err := deployWorkflowTemplate(out.Deploy, out.SpecHash, out.Root)
	if err != nil {
		return nil, err
	}
	for i := range deploy.Spec.Templates[0].DAG.Tasks {
		t := &deploy.Spec.Templates[0].DAG.Tasks[i]
		app := apps[t.Name]
		if t.Name == HandoffTask {
			app = out.Root
		}
		if app == nil {
			continue // a join
		}
		if err := withManifest(t, app); err != nil {
			return nil, err
		}
	}
	teardown, err := teardownWorkflowTemplate(out.Teardown, out.SpecHash, out.Root)
	if err != nil {
		return nil, err
	}
	validate, err := validateWorkflowTemplate(out.Deploy, out.SpecHash)
	if err != nil {
		return nil, err
	}
	for _, wt := range []*wfv1.WorkflowTemplate{deploy, teardown, validate} {
		dropDefaults(wt.Spec.Templates[0].DAG.Tasks, out.ClusterTemplates)
	}
	out.WorkflowTemplates[dag.Deploy] = deploy
	out.WorkflowTemplates[dag.Teardown] = teardown
	out.WorkflowTemplates[dag.Validate] = validate
	for _, a := range Actions {
		out.Workflows[a] = workflowOf(out.WorkflowTemplates[a])
	}
	return out, nil
}

// workflowOf is the Workflow that runs a WorkflowTemplate: what
// `argo submit generated/<p>/workflows/<action>.yaml` submits.
func workflowOf(wt *wfv1.WorkflowTemplate) *wfv1.Workflow {
	return &wfv1.Workflow{
		TypeMeta: metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: wt.Name + "-",
			Namespace:    wt.Namespace,
			Labels:       wt.Labels,
		},
		Spec: wfv1.WorkflowSpec{WorkflowTemplateRef: &wfv1.WorkflowTemplateRef{Name: wt.Name}},
	}
}
