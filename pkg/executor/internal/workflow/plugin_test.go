package workflow

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/livestate/livestatetest"
)

func TestFindPluginMissing(t *testing.T) {
	w := livestatetest.NoPluginDeploy(t)
	pm := FindPluginMissing(w)
	if pm == nil || !reflect.DeepEqual(pm.Tasks, []string{"cert-manager", "ingress-nginx"}) || pm.Workflow != w.Name {
		t.Fatalf("got %+v", pm)
	}
	const want = `minimal-deploy-p1: nodes cert-manager, ingress-nginx failed with "no plugin executed the template": the agent pod had no deployctl plugin`
	if pm.Error() != want {
		t.Errorf("message %q\nwant    %q", pm.Error(), want)
	}
	// A step's own failure, in either mode, is not a missing plugin.
	for _, other := range []struct{ typ, msg string }{
		{"Plugin", "Degraded: Deployment app/web: 0/1 ready"},
		{"Pod", "main: Error (exit code 1): no plugin executed the template"},
	} {
		w := livestatetest.NoPluginDeploy(t)
		for id, n := range w.Status.Nodes {
			if n.Type == wfv1.NodeTypePlugin {
				n.Type, n.Message = wfv1.NodeType(other.typ), other.msg
				w.Status.Nodes[id] = n
			}
		}
		if pm := FindPluginMissing(w); pm != nil {
			t.Errorf("%s node %q: %+v", other.typ, other.msg, pm)
		}
	}
}

// Follow ends as soon as Halt says so, with its error, without waiting
// for the run; Stop then stops the run as `argo stop` does, once.
func TestHaltAndStop(t *testing.T) {
	w := livestatetest.NoPluginDeploy(t)
	wfs := wffake.NewSimpleClientset(w)
	cl := &kube.Clients{Workflows: wfs}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	halt := func(w *wfv1.Workflow) error {
		if pm := FindPluginMissing(w); pm != nil {
			return pm
		}
		return nil
	}
	got, err := Follow(context.Background(), cl, w, Watch{Out: io.Discard, Log: quiet, Poll: 1 << 40, Halt: halt,
		NodeLog: func(string) *slog.Logger { return quiet }, OnReadError: func() {}})
	var pm *PluginMissing
	if got != w || !errors.As(err, &pm) {
		t.Fatalf("Follow: %v", err)
	}
	if err := Stop(context.Background(), cl, w); err != nil {
		t.Fatal(err)
	}
	live, err := wfs.ArgoprojV1alpha1().Workflows("argo").Get(context.Background(), w.Name, metav1.GetOptions{})
	if err != nil || live.Spec.Shutdown != wfv1.ShutdownStrategyStop {
		t.Fatalf("after Stop: %v %q", err, live.Spec.Shutdown)
	}
	n := len(wfs.Actions())
	if err := Stop(context.Background(), cl, live); err != nil || len(wfs.Actions()) != n {
		t.Errorf("a stopped run is stopped again: %v, %v", err, wfs.Actions()[n:])
	}
	live.Status.Phase = wfv1.WorkflowFailed
	live.Spec.Shutdown = ""
	if err := Stop(context.Background(), cl, live); err != nil || len(wfs.Actions()) != n {
		t.Errorf("a finished run is stopped: %v", err)
	}
}
