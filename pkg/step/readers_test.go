package step

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/livestate"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

// asFailedTask puts a result file where Argo Workflows keeps it: the output
// parameter `result` of the last attempt of a failed Retry node (the Retry
// node itself has none), as the executor and insight find it.
func asFailedTask(raw []byte) (*wfv1.Workflow, *wfv1.NodeStatus) {
	v := wfv1.AnyString(string(raw))
	wf := &wfv1.Workflow{}
	wf.Name = "p-deploy-x"
	wf.Status.Nodes = wfv1.Nodes{
		"r": {ID: "r", Name: "p-deploy-x.web-app", DisplayName: "web-app", Type: wfv1.NodeTypeRetry, Phase: wfv1.NodeFailed, Children: []string{"a0"}},
		"a0": {ID: "a0", Name: "p-deploy-x.web-app(0)", DisplayName: "web-app(0)", Type: wfv1.NodeTypePod, Phase: wfv1.NodeFailed,
			Outputs: &wfv1.Outputs{Parameters: []wfv1.Parameter{{Name: "result", Value: &v}}}},
	}
	return wf, livestate.TaskNodes(wf)["web-app"]
}

// The readers decode what the step really writes: its result file, from
// the step's own code path, read back through livestate.ResultOf (the
// executor's report and `deployctl status|explain`).
func TestReadersDecodeTheStepsResultFile(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		run  func() outcome
		code int
		want stepresult.Result // the fields a reader keeps, besides Message
		diag []string
	}{{
		name: "sync-and-wait Degraded",
		run: func() outcome {
			f := newFakeArgo(t, scenario{exists: true, before: healthy, staleAfterOp: true, after: hs(degraded), resync: 30 * time.Millisecond})
			return syncAndWait(t, f)
		},
		code: exitcode.Failure,
		want: stepresult.Result{Command: "sync-and-wait", Outcome: "Failed", ExitCode: 1, App: "web-app", Health: "Degraded",
			HealthMessage: "web is Degraded", SyncStatus: "Synced", OperationPhase: "Succeeded",
			DegradedResources: []stepresult.Finding{{Resource: "Deployment.apps ns/web", Status: "Degraded", Message: "web is Degraded"},
				{Resource: "Pod ns/web-1", Status: "Degraded", Message: "web is Degraded"}}},
		diag: []string{"Argo CD health Degraded: web is Degraded, sync Synced, operation Succeeded",
			"unhealthy Deployment.apps ns/web (Degraded: web is Degraded)", "unhealthy Pod ns/web-1 (Degraded: web is Degraded)"},
	}, {
		name: "teardown with orphans",
		run: func() outcome {
			tree, managed := crdTree()
			managed = append(managed, &v1alpha1.ResourceDiff{Kind: "Secret", Namespace: "db", Name: "creds",
				LiveState: `{"metadata":{"annotations":{"argocd.argoproj.io/sync-options":"Delete=false"}}}`})
			f := newFakeArgo(t, scenario{exists: true, before: healthy, tree: tree, managed: managed})
			return teardown(t, f, "--crd-policy", "delete")
		},
		code: exitcode.Partial,
		want: stepresult.Result{Command: "teardown", Outcome: "Partial", ExitCode: 2, App: "web-app",
			Orphans:      []stepresult.Finding{{Resource: "Secret db/creds", Status: "kept", Message: "annotated argocd.argoproj.io/sync-options: Delete=false"}},
			RetainedPVCs: []string{"PersistentVolumeClaim db/data-pg-0"},
			DeletedCRDs:  []string{"CustomResourceDefinition.apiextensions.k8s.io widgets.example.com"}},
		diag: []string{"orphan Secret db/creds (kept: annotated argocd.argoproj.io/sync-options: Delete=false)"},
	}}
	for _, c := range cases {
		o := c.run()
		if o.code != c.code {
			t.Fatalf("%s: exit %d, want %d\n%s", c.name, o.code, c.code, o.stderr)
		}
		wf, task := asFailedTask(o.raw)
		got := livestate.ResultOf(wf, task)
		if got == nil {
			t.Fatalf("%s: no result read from\n%s", c.name, o.raw)
		}
		if got.Message == "" || got.Message != o.str("message") {
			t.Errorf("%s: message %q, the file says %q", c.name, got.Message, o.str("message"))
		}
		c.want.Message = got.Message
		if !reflect.DeepEqual(&c.want, got) {
			t.Errorf("%s: read\n got %+v\nwant %+v", c.name, got, &c.want)
		}
		if d := got.Diagnostics(); !slices.Equal(d, c.diag) {
			t.Errorf("%s: diagnostics\n got %q\nwant %q", c.name, d, c.diag)
		}
	}
}
