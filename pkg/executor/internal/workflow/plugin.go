package workflow

import (
	"context"
	"fmt"
	"sort"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/kube"
)

// NoPluginMessage is the message Argo's agent (workflow/executor/agent.go)
// fails a plugin node with when no plugin of its pod took the template:
// the controller runs no executor plugins, or did not load the plugin's
// ConfigMap. No step ran, so no Application was touched.
const NoPluginMessage = "no plugin executed the template"

// PluginMissing is a run whose plugin nodes found no plugin to run them.
type PluginMissing struct {
	Workflow string
	Tasks    []string // the tasks whose attempts failed so, sorted
}

func (e *PluginMissing) Error() string {
	return fmt.Sprintf("%s: %s %s failed with %q: the agent pod had no deployctl plugin", e.Workflow, plural(len(e.Tasks), "node", "nodes"), strings.Join(e.Tasks, ", "), NoPluginMessage)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// FindPluginMissing returns the run's PluginMissing, nil when no plugin
// node failed with NoPluginMessage.
func FindPluginMissing(w *wfv1.Workflow) *PluginMissing {
	tasks := map[string]bool{}
	for _, n := range w.Status.Nodes {
		if n.Type != wfv1.NodeTypePlugin || !n.FailedOrError() || !strings.Contains(n.Message, NoPluginMessage) {
			continue
		}
		task, _, _ := strings.Cut(n.DisplayName, "(") // an attempt is TASK(N)
		tasks[task] = true
	}
	if len(tasks) == 0 {
		return nil
	}
	e := &PluginMissing{Workflow: w.Name}
	for t := range tasks {
		e.Tasks = append(e.Tasks, t)
	}
	sort.Strings(e.Tasks)
	return e
}

// Stop asks the controller to stop a run as `argo stop` does (spec.shutdown
// Stop: no new node starts, running ones end). A run that already ended is
// left as it is.
func Stop(ctx context.Context, cl *kube.Clients, w *wfv1.Workflow) error {
	wfs := cl.Workflows.ArgoprojV1alpha1().Workflows(w.Namespace)
	for try := 0; ; try++ {
		if w.Status.Phase.Completed() || w.Spec.Shutdown == wfv1.ShutdownStrategyStop {
			return nil
		}
		c := w.DeepCopy()
		c.Spec.Shutdown = wfv1.ShutdownStrategyStop
		_, err := wfs.Update(ctx, c, metav1.UpdateOptions{})
		switch {
		case err == nil:
			return nil
		case !apierrors.IsConflict(err) || try >= 3:
			return fmt.Errorf("stopping %s: %w", w.Name, err)
		}
		if w, err = wfs.Get(ctx, w.Name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("stopping %s: %w", w.Name, err)
		}
	}
}
