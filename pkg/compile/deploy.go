package compile

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/healthlua"
	"github.com/deployctl/deployctl/pkg/manifest"
	"github.com/deployctl/deployctl/pkg/spec"
	"github.com/deployctl/deployctl/pkg/step"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// deployWorkflowTemplate is the deploy DAG: one sync-and-wait task per app,
// depending only on its direct dependencies (apps, or stack joins for
// stack-level dependsOn). Nothing waits for an unrelated node: no waves.
// With a root Application configured, a last task hands the platform over
// to Argo CD once every app is Healthy. The tasks go to sink, each app's
// after app has made its Application; the template is returned without
// them. Each task reads its Application from the ConfigMaps store fills
// (manifests.go); they go to store.emit.
func deployWorkflowTemplate(d *dag.DAG, hash string, root *Application, app func(*dag.Node) (*Application, error), sink *taskSink, store *manifestStore) (*wfv1.WorkflowTemplate, error) {
	reqs, err := healthRequirements(d.Platform)
	if err != nil {
		return nil, err
	}
	// The platform's default timeouts and retry are workflow parameters:
	// a task passes its own only when they differ (issue 24).
	def, retry := d.Platform.Spec.Defaults.AppTimeouts(), d.Platform.Spec.Defaults.AppRetry()
	plat, err := platformParams(&stepcontract.SyncAndWait{SyncTimeout: def.Sync.Duration, HealthTimeout: def.Health.Duration, Retry: retryOf(&retry)})
	if err != nil {
		return nil, fmt.Errorf("spec.defaults.timeouts: %w", err)
	}
	extra := append([]wfv1.Parameter{param(stepcontract.WorkflowHealthCustomizations, reqs)}, plat...)
	wf := paramValues(append(connectionParams(d.Platform), extra...))
	err = eachTask(d, d.Graph, func(n *dag.Node, deps []string) (wfv1.DAGTask, error) {
		a, err := app(n)
		if err != nil {
			return wfv1.DAGTask{}, err
		}
		t, err := syncTask(n.Name, n.App, a, deps, wf)
		if err != nil {
			return t, err
		}
		return fromStore(t, store)
	}, sink.add)
	if err != nil {
		return nil, err
	}
	if root != nil {
		t, err := handoffTask(d, root, wf)
		if err == nil {
			t, err = fromStore(t, store)
		}
		if err != nil {
			return nil, err
		}
		if err := sink.add(t); err != nil {
			return nil, err
		}
	}
	if err := store.flush(); err != nil {
		return nil, err
	}
	main := wfv1.Template{Name: string(dag.Deploy), DAG: &wfv1.DAGTemplate{}}
	return workflowTemplate(d.Platform, string(dag.Deploy), hash, extra, main, sink.join), nil
}

func healthRequirements(p *spec.Platform) (string, error) {
	cs, err := healthlua.Customizations(p)
	if err != nil {
		return "", err
	}
	lines := make([]string, len(cs))
	for i, c := range cs {
		key := c.Kind
		if c.Group != "" {
			key = c.Group + "/" + c.Kind
		}
		lines[i] = step.HealthRequirement(key, c.Lua)
	}
	return strings.Join(lines, "\n"), nil
}

// syncTask calls sync-and-wait for one app, with its Application as the
// manifest; wf are the deploy's workflow parameters.
func syncTask(name string, a *spec.App, app *Application, deps []string, wf map[string]string) (wfv1.DAGTask, error) {
	// base64-encoded JSON: Helm values and other user text never reach an
	// Argo expression.
	raw, err := manifest.JSON(app)
	if err != nil {
		return wfv1.DAGTask{}, err
	}
	return stepTask(name, &stepcontract.SyncAndWait{
		App:            app.Name,
		ManifestBase64: base64.StdEncoding.EncodeToString(raw),
		SyncTimeout:    a.Timeouts.Sync.Duration,
		HealthTimeout:  a.Timeouts.Health.Duration,
		Checks:         checks(a.HealthChecks),
		AllowSuspended: a.AllowSuspended,
		AppNamespace:   appNamespaceArg(a),
		Retry:          retryOf(a.Retry),
	}, deps, wf)
}

// checks renders an app's extra health checks in the step's --check syntax:
// resource:GROUP/KIND/NAMESPACE/NAME and http:URL=CODES.
func checks(hcs []spec.HealthCheck) []string {
	var lines []string
	for _, h := range hcs {
		switch {
		case h.Resource != nil:
			r := h.Resource
			lines = append(lines, fmt.Sprintf("resource:%s/%s/%s/%s", r.Group, r.Kind, r.Namespace, r.Name))
		case h.HTTP != nil:
			codes := h.HTTP.ExpectStatus
			if len(codes) == 0 {
				codes = []int{200}
			}
			s := make([]string, len(codes))
			for i, c := range codes {
				s[i] = strconv.Itoa(c)
			}
			lines = append(lines, fmt.Sprintf("http:%s=%s", h.HTTP.URL, strings.Join(s, ",")))
		}
	}
	return lines
}

// handoffTask creates and syncs the root Application after every app of the
// deploy is Healthy: it waits for the DAG's sinks, which transitively
// cover every node.
func handoffTask(d *dag.DAG, root *Application, wf map[string]string) (wfv1.DAGTask, error) {
	var sinks []string
	for _, n := range d.Graph.Nodes() {
		if len(d.Graph.Dependents(n)) == 0 {
			sinks = append(sinks, n)
		}
	}
	sort.Strings(sinks)
	return syncTask(HandoffTask, &spec.App{
		Timeouts: &spec.DefaultTimeouts,
		Retry:    &spec.DefaultRetry,
	}, root, sinks, wf)
}
