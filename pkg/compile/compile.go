package compile

import (
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
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
	// ApplicationConfigMaps hold the deploy's Applications, which its
	// tasks read by valueFrom.configMapKeyRef (manifests.go), in order.
	ApplicationConfigMaps []*corev1.ConfigMap
	Root                  *Application // the GitOps handoff, nil if not configured
	RBAC                  []any
	Deploy, Teardown      *dag.DAG // the scoped DAGs the workflows were made from
}

// Actions in output order.
var Actions = []dag.Action{dag.Deploy, dag.Teardown, dag.Validate}

// Compile builds every object of a platform for a scope ("platform",
// "stack:NAME", "app:NAME"): deploy and validate cover the scope and what it
// depends on; teardown covers the scope and what depends on it.
func Compile(d *dag.DAG, scope string) (*Output, error) {
	// Deploy and teardown always have a task list, validate's is nil
	// without stacks: rendered as `tasks: []` and `tasks: null`.
	tasks := map[dag.Action][]wfv1.DAGTask{dag.Deploy: {}, dag.Teardown: {}}
	var apps []*Application
	var cms []*corev1.ConfigMap
	out, err := Stream(d, scope, Visitor{
		Application: func(a *Application) error {
			apps = append(apps, a)
			return nil
		},
		ConfigMap: func(c *corev1.ConfigMap) error {
			cms = append(cms, c)
			return nil
		},
		Task: func(action dag.Action, t *wfv1.DAGTask) error {
			tasks[action] = append(tasks[action], *t)
			return nil
		},
		Template: func(action dag.Action, wt *wfv1.WorkflowTemplate) error {
			wt.Spec.Templates[0].DAG.Tasks = tasks[action]
			delete(tasks, action)
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	out.Applications = apps
	out.ApplicationConfigMaps = cms
	return out, nil
}

// Visitor receives the objects of a compile one at a time (Stream). A nil
// field skips those objects.
type Visitor struct {
	// Application is each app's Application, in topological order, before
	// its deploy task (which carries it as its manifest). It must not be
	// changed.
	Application func(*Application) error
	// Task is each task of an action's main DAG template, in output order,
	// with the arguments the WorkflowTemplate has (defaults dropped).
	Task func(dag.Action, *wfv1.DAGTask) error
	// ConfigMap is each ConfigMap of the deploy's Applications, once full
	// (the last right before the deploy's Template).
	ConfigMap func(*corev1.ConfigMap) error
	// Template is an action's WorkflowTemplate right after its last task,
	// its main template without them (Spec.Templates[0].DAG.Tasks empty).
	Template func(dag.Action, *wfv1.WorkflowTemplate) error
}

// Stream compiles as Compile does, handing each Application, DAG task and
// WorkflowTemplate to v as it is made, and keeping none: a caller that
// checks or sizes them one by one holds one app's objects, not the
// platform's (`deployctl import` checks 10,000 apps so). Compile is Stream
// keeping everything, so both make the same objects. The Output returned
// has all but Applications; WorkflowTemplates and Workflows hold the
// templates as v got them, without tasks.
func Stream(d *dag.DAG, scope string, v Visitor) (*Output, error) {
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
	plugin := p.Spec.Workflow.StepMode.Plugin()
	var patch string
	if plugin {
		if patch, err = podSpecPatch(p); err != nil {
			return nil, err
		}
	}
	sink := func(action dag.Action) *taskSink {
		return &taskSink{emit: func(t wfv1.DAGTask) error {
			if plugin && t.TemplateRef != nil {
				t.TemplateRef.Name += PluginCWTSuffix
			}
			if v.Task == nil {
				return nil
			}
			return v.Task(action, &t)
		}}
	}
	app := func(n *dag.Node) (*Application, error) {
		a, err := application(p, n.Stack, n.App)
		if err == nil && v.Application != nil {
			err = v.Application(a)
		}
		return a, err
	}
	done := func(action dag.Action, wt *wfv1.WorkflowTemplate, err error) error {
		if err != nil {
			return err
		}
		wt.Spec.PodSpecPatch = patch // plugin mode: the agent pod's credential volumes
		out.WorkflowTemplates[action] = wt
		out.Workflows[action] = workflowOf(wt)
		if v.Template == nil {
			return nil
		}
		return v.Template(action, wt)
	}
	store := &manifestStore{p: p, hash: out.SpecHash, emit: func(c *corev1.ConfigMap) error {
		if v.ConfigMap == nil {
			return nil
		}
		return v.ConfigMap(c)
	}}
	wt, err := deployWorkflowTemplate(out.Deploy, out.SpecHash, out.Root, app, sink(dag.Deploy), store)
	if err := done(dag.Deploy, wt, err); err != nil {
		return nil, err
	}
	wt, err = teardownWorkflowTemplate(out.Teardown, out.SpecHash, out.Root, sink(dag.Teardown))
	if err := done(dag.Teardown, wt, err); err != nil {
		return nil, err
	}
	wt, err = validateWorkflowTemplate(out.Deploy, out.SpecHash, sink(dag.Validate))
	if err := done(dag.Validate, wt, err); err != nil {
		return nil, err
	}
	return out, nil
}

// taskSink takes one WorkflowTemplate's tasks as they are made, noting
// whether one is a join (the template then needs the join template).
type taskSink struct {
	join bool
	emit func(wfv1.DAGTask) error
}

func (s *taskSink) add(t wfv1.DAGTask) error {
	s.join = s.join || t.Template == tmplJoin
	return s.emit(t)
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
