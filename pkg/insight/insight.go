// Package insight explains a live (or finished) platform run, read-only:
// each node's state with its duration from the Workflow's status, and for
// every node that has not started, which dependencies it waits for and what
// Argo CD says of them. It backs `deployctl status` and `deployctl explain`.
//
// Everything comes from the cluster: the DAG from the Workflow itself (its
// stored template: what runs, not what a spec file says now), the nodes'
// progress from its status, and each app's sync and health from its Argo CD
// Application. Nothing is written.
package insight

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deployctl/deployctl/internal/redact"
	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/graph"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/livestate"
	"github.com/deployctl/deployctl/pkg/step/argocd/appstatus"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// States of a node, as people ask about them.
const (
	Waiting        = "waiting"                 // not started: something it depends on is not done
	Starting       = "starting"                // its pod is being scheduled
	Creating       = "creating"                // the step is creating the Application
	Syncing        = "syncing"                 // Argo CD runs the sync operation
	WaitingHealth  = "waiting for health"      // synced, not Healthy yet
	Checking       = "checking"                // Healthy; the step confirms it (fresh health, extra checks)
	Healthy        = string(appstatus.Healthy) // deploy: done
	Deleting       = "deleting"                // teardown: deleting the Application and its resources
	Deleted        = "deleted"                 // teardown: done
	Done           = "done"                    // a stack's join, or validate
	Failed         = "failed"
	Omitted        = "omitted" // never run: something it depends on failed
	NotRun         = "not run" // the run ended (stopped) before it
	actionDeploy   = "deploy"
	actionTeardown = "teardown"
)

// Run is one workflow run of a platform.
type Run struct {
	Workflow        string    `json:"workflow"`
	Namespace       string    `json:"namespace"`
	Platform        string    `json:"platform,omitempty"`
	Action          string    `json:"action"`
	Phase           string    `json:"phase"`
	Message         string    `json:"message,omitempty"`
	StartedAt       time.Time `json:"startedAt,omitempty"`
	FinishedAt      time.Time `json:"finishedAt,omitempty"`
	Seconds         float64   `json:"seconds"`
	ArgoCDNamespace string    `json:"argocdNamespace"`
	// Nodes in execution order (every node after what it depends on).
	Nodes []*Node `json:"nodes"`
	// Validation: a validate run's apps and aggregate, from its steps'
	// results (nil for a deploy or teardown run).
	Validation *Validation      `json:"validation,omitempty"`
	byName     map[string]*Node `json:"-"`
	deps       *graph.Graph     // task → the tasks it depends on
	secrets    *redact.Set
}

// Node is one task of the run: an app, or a stack's join.
type Node struct {
	Name      string   `json:"name"`
	App       string   `json:"app,omitempty"` // the Argo CD Application; "" for a join
	Stack     bool     `json:"stack,omitempty"`
	DependsOn []string `json:"dependsOn,omitempty"`
	// Apps: a validate task's apps (it is a stack's task, not an app).
	Apps       []string  `json:"apps,omitempty"`
	State      string    `json:"state"`
	Phase      string    `json:"phase,omitempty"` // Argo's node phase
	StartedAt  time.Time `json:"startedAt,omitempty"`
	FinishedAt time.Time `json:"finishedAt,omitempty"`
	Seconds    float64   `json:"seconds,omitempty"`
	Attempts   int       `json:"attempts,omitempty"`
	// Message says why it failed (the step's result, else Argo's message).
	Message     string   `json:"message,omitempty"`
	Diagnostics []string `json:"diagnostics,omitempty"`
	// WaitingFor are the apps (stack joins resolved to their apps) that
	// hold back a node that has not started.
	WaitingFor []string `json:"waitingFor,omitempty"`
	// BlockedBy are the failed nodes an omitted (or not run) node depended
	// on, directly or not.
	BlockedBy []string   `json:"blockedBy,omitempty"`
	ArgoCD    *AppStatus `json:"argocd,omitempty"`
	// AppNamespace is the Application's namespace when it is not Argo
	// CD's (the task's app-namespace: the app's applicationNamespace).
	AppNamespace string `json:"appNamespace,omitempty"`
}

// AppStatus is what Argo CD says of an Application.
type AppStatus = livestate.AppStatus

// Node returns a node by task name or Application name, or nil.
func (r *Run) Node(name string) *Node {
	if n := r.byName[name]; n != nil {
		return n
	}
	for _, n := range r.Nodes {
		if n.App == name {
			return n
		}
	}
	return nil
}

// Options select the run.
type Options struct {
	Namespace string // the Workflows' namespace
	Workflow  string // a name; "" for the platform's latest deploy or teardown
	Platform  string // with Workflow "": only this platform's runs
	// ArgoCDNamespace overrides the run's own argocd-namespace parameter.
	ArgoCDNamespace string
	Now             time.Time
	// Secrets are the credentials to mask (the kubeconfig's): the run and
	// the errors are redacted before they leave Load, and WriteStatus and
	// Write mask them again at the writer. Nil: the credential patterns.
	Secrets *redact.Set
}

// Load reads a run and the Applications of its apps. Everything it returns
// (the run's messages, an API server's error body) is redacted.
func Load(ctx context.Context, cl *kube.Clients, o Options) (*Run, error) {
	r, err := load(ctx, cl, o)
	if err != nil {
		return nil, o.Secrets.Error(err)
	}
	o.Secrets.Walk(r)
	r.secrets = o.Secrets
	return r, nil
}

func load(ctx context.Context, cl *kube.Clients, o Options) (*Run, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	wf, err := findWorkflow(ctx, cl, o)
	if err == nil {
		err = livestate.Hydrate(wf)
	}
	if err != nil {
		return nil, err
	}
	tmpl, err := dagTemplate(ctx, cl, wf)
	if err != nil {
		return nil, err
	}
	r := newRun(wf, tmpl, o.Now)
	if o.ArgoCDNamespace != "" {
		r.ArgoCDNamespace = o.ArgoCDNamespace
	}
	// Every namespace the run's Applications live in: Argo CD's, and the
	// app-namespace of apps in other namespaces; keyed NAMESPACE/NAME.
	apps := map[string]*unstructured.Unstructured{}
	nss := map[string]bool{r.ArgoCDNamespace: true}
	for _, n := range r.Nodes {
		if n.AppNamespace != "" {
			nss[n.AppNamespace] = true
		}
	}
	for _, ns := range slices.Sorted(maps.Keys(nss)) {
		got, err := readApps(ctx, cl, ns)
		if err != nil {
			return nil, err
		}
		for name, u := range got {
			apps[ns+"/"+name] = u
		}
	}
	r.settle(wf, apps, o.Now)
	return r, nil
}

// findWorkflow gets the named run, or the latest deploy or teardown run (of
// the platform, if given): the runs deployctl orders by dependencies.
func findWorkflow(ctx context.Context, cl *kube.Clients, o Options) (*wfv1.Workflow, error) {
	wfs := cl.Workflows.ArgoprojV1alpha1().Workflows(o.Namespace)
	if o.Workflow != "" {
		wf, err := wfs.Get(ctx, o.Workflow, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("reading workflow %s/%s: %w", o.Namespace, o.Workflow, err)
		}
		return wf, nil
	}
	sel := compile.LabelPlatform
	if o.Platform != "" {
		sel += "=" + o.Platform
	}
	list, err := wfs.List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing workflows in %s: %w", o.Namespace, err)
	}
	var latest *wfv1.Workflow
	for i := range list.Items {
		w := &list.Items[i]
		if a := w.Labels[compile.LabelAction]; a != actionDeploy && a != actionTeardown {
			continue
		}
		if latest == nil || latest.CreationTimestamp.Before(&w.CreationTimestamp) ||
			(latest.CreationTimestamp.Equal(&w.CreationTimestamp) && latest.Name < w.Name) {
			latest = w
		}
	}
	if latest == nil {
		what := "deployctl"
		if o.Platform != "" {
			what = "platform " + o.Platform + "'s"
		}
		return nil, fmt.Errorf("no %s deploy or teardown workflow in namespace %s", what, o.Namespace)
	}
	return latest, nil
}

// dagTemplate is the run's DAG: the spec stored in its status (the template
// as it was when the run started), else the inline spec, else the
// WorkflowTemplate it references.
func dagTemplate(ctx context.Context, cl *kube.Clients, wf *wfv1.Workflow) (*wfv1.WorkflowSpec, error) {
	spec := wf.Status.StoredWorkflowSpec
	if spec == nil && len(wf.Spec.Templates) > 0 {
		spec = &wf.Spec
	}
	if spec == nil && wf.Spec.WorkflowTemplateRef != nil {
		ref := wf.Spec.WorkflowTemplateRef
		if ref.ClusterScope {
			cwt, err := cl.Workflows.ArgoprojV1alpha1().ClusterWorkflowTemplates().Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("reading ClusterWorkflowTemplate %s of %s: %w", ref.Name, wf.Name, err)
			}
			spec = &cwt.Spec
		} else {
			wt, err := cl.Workflows.ArgoprojV1alpha1().WorkflowTemplates(wf.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("reading WorkflowTemplate %s/%s of %s: %w", wf.Namespace, ref.Name, wf.Name, err)
			}
			spec = &wt.Spec
		}
	}
	if spec == nil {
		return nil, fmt.Errorf("workflow %s has no template to read its DAG from", wf.Name)
	}
	return spec, nil
}

func newRun(wf *wfv1.Workflow, spec *wfv1.WorkflowSpec, now time.Time) *Run {
	r := &Run{
		Workflow: wf.Name, Namespace: wf.Namespace, Platform: wf.Labels[compile.LabelPlatform],
		Action: wf.Labels[compile.LabelAction], Phase: string(wf.Status.Phase), Message: wf.Status.Message,
		StartedAt: wf.Status.StartedAt.Time, FinishedAt: wf.Status.FinishedAt.Time,
		ArgoCDNamespace: "argocd", byName: map[string]*Node{},
	}
	if r.Phase == "" {
		r.Phase = string(wfv1.WorkflowPending)
	}
	r.Seconds = seconds(r.StartedAt, r.FinishedAt, now)
	entry := spec.Entrypoint
	if wf.Spec.Entrypoint != "" {
		entry = wf.Spec.Entrypoint
	}
	if r.Action == "" {
		r.Action = entry
	}
	for _, args := range []wfv1.Arguments{spec.Arguments, wf.Spec.Arguments} {
		for _, p := range args.Parameters {
			if p.Name == stepcontract.WorkflowArgoCDNamespace && p.Value != nil && p.Value.String() != "" {
				r.ArgoCDNamespace = p.Value.String()
			}
		}
	}
	var tasks []wfv1.DAGTask
	for _, t := range spec.Templates {
		if t.Name == entry && t.DAG != nil {
			tasks = t.DAG.Tasks
		}
	}
	for _, t := range tasks {
		n := &Node{Name: t.Name, DependsOn: taskDeps(t), Stack: true}
		for _, p := range t.Arguments.Parameters {
			if p.Name == stepcontract.InputApp && p.Value != nil {
				n.App, n.Stack = p.Value.String(), false
			}
			if p.Name == stepcontract.InputApps && p.Value != nil {
				n.Apps = stepcontract.Lines(p.Value.String()) // as deploystep reads it
			}
			if p.Name == stepcontract.InputAppNamespace && p.Value != nil {
				n.AppNamespace = p.Value.String()
			}
		}
		r.byName[n.Name] = n
		r.Nodes = append(r.Nodes, n)
	}
	r.deps = graph.New()
	for _, n := range r.Nodes {
		r.deps.AddNode(n.Name)
		for _, d := range n.DependsOn {
			if r.byName[d] != nil {
				r.deps.DependOn(n.Name, d)
			}
		}
	}
	// Dependencies first, ties by name; a cycle cannot run: keep every node
	// as listed.
	if order, err := r.deps.TopoOrder(); err == nil {
		for i, name := range order {
			r.Nodes[i] = r.byName[name]
		}
	}
	return r
}

// taskDeps are the tasks a task's depends expression (or dependencies
// list) names: "a.Succeeded && b.Succeeded" → a, b.
func taskDeps(t wfv1.DAGTask) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, d := range t.Dependencies {
		add(d)
	}
	for _, tok := range strings.FieldsFunc(t.Depends, func(r rune) bool {
		return r == ' ' || r == '(' || r == ')' || r == '&' || r == '|' || r == '!'
	}) {
		name, _, _ := strings.Cut(tok, ".")
		add(name)
	}
	sort.Strings(out)
	return out
}

func readApps(ctx context.Context, cl *kube.Clients, ns string) (map[string]*unstructured.Unstructured, error) {
	list, err := cl.Dynamic.Resource(livestate.GVRApplication).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading Applications in %s: %w", ns, err)
	}
	out := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		out[list.Items[i].GetName()] = &list.Items[i]
	}
	return out, nil
}

func seconds(start, end, now time.Time) float64 {
	if start.IsZero() {
		return 0
	}
	if end.IsZero() {
		end = now
	}
	return end.Sub(start).Round(100 * time.Millisecond).Seconds()
}
