package step_test

// The executor plugin (pkg/step/plugin) against the fake Argo CD: what the
// agent sees of restarts, retries and failures. Here rather than beside
// the plugin because the fake lives in this package's tests.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deployctl/deployctl/pkg/step"
	"github.com/deployctl/deployctl/pkg/step/plugin"
	pt "github.com/deployctl/deployctl/pkg/step/plugin/plugintest"
)

const agentToken = "agent-token"

// agent is one agent pod's plugin: a server of its own, as after a restart.
type agent struct {
	s    *plugin.Server
	stop func()
}

func newAgent(t testing.TB, k *pt.Kube) *agent {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := plugin.New(ctx, plugin.Config{Token: agentToken, Requeue: 50 * time.Millisecond, Exec: step.ExecForTest,
		KubeURL: k.URL, KubeTokenFile: k.TokenFile, LookupWindow: time.Second, LookupInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a := &agent{s: s, stop: func() { cancel(); s.Wait() }}
	t.Cleanup(a.stop)
	return a
}

// webBody is the agent's call for attempt n of node wf.web-app, running
// the sync-and-wait of web-app.
func webBody(t testing.TB, k *pt.Kube, f *step.FakeArgo, n string) []byte {
	return k.Body(pt.AtNode(pt.Template("sync-and-wait", []pt.Param{{Name: "app", Value: "web-app"}},
		[]string{"sync-and-wait", "--app", "web-app", "--sync-timeout", "3s", "--health-timeout", "3s"}, f.StepEnv(t)), "wf.web-app", n))
}

// until calls as the agent does until cond holds for the reply.
func until(t *testing.T, a *agent, body []byte, what string, cond func(pt.Reply) bool) pt.Reply {
	t.Helper()
	for limit := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, rep := pt.Call(t, a.s, agentToken, body)
		if rep.Node == nil {
			t.Fatalf("reply without a node")
		}
		if cond(rep) {
			return rep
		}
		if time.Now().After(limit) {
			t.Fatalf("never %s; last reply %+v", what, rep.Node)
		}
	}
}

func finished(r pt.Reply) bool { return r.Node.Phase != "Running" }

// (a) The agent restarts while the node waits: the new plugin derives the
// same sync id from the node and the workflow's start, adopts the running
// operation. One sync
// request in all; Succeeded only after fresh health.
func TestPluginRestartAdopts(t *testing.T) {
	t.Parallel()
	f := step.NewFakeArgoFor(t, 600*time.Millisecond, false, 0)
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	body := webBody(t, k, f, "0")
	first := newAgent(t, k)
	until(t, first, body, "the operation runs", func(pt.Reply) bool { return f.OurOpRunning() })
	first.stop() // SIGTERM: the agent pod is gone
	second := newAgent(t, k)
	rep := until(t, second, body, "finished", finished)
	if rep.Node.Phase != "Succeeded" || !f.ShownFreshHealthy() {
		t.Fatalf("%+v, fresh Healthy shown %v", rep.Node, f.ShownFreshHealthy())
	}
	if n := f.SyncRequests(); n != 1 {
		t.Errorf("%d sync requests, want 1: the restarted plugin must adopt", n)
	}
	if !strings.Contains(rep.Result(), "adopted this node's operation") || !strings.Contains(rep.Node.Message, "Healthy at revision") {
		t.Errorf("message %q, result %s", rep.Node.Message, rep.Result())
	}

	// (b) A workflow retry sets a new status.startedAt and makes the node
	// anew: the same template (attempt 0), a new agent, a new sync.
	k.SetStartedAt("2026-11-24T05:00:00Z")
	third := newAgent(t, k)
	if rep := until(t, third, body, "finished", finished); rep.Node.Phase != "Succeeded" {
		t.Fatalf("after the workflow retry: %+v", rep.Node)
	}
	if n := f.SyncRequests(); n != 2 {
		t.Errorf("%d sync requests after a workflow retry, want 2", n)
	}
}

// (c) The step fails transiently while its operation runs on: Error, and
// the node-level retry (the node's next attempt) adopts the running
// operation instead of syncing again.
func TestPluginNodeRetryAdoptsRunningOperation(t *testing.T) {
	t.Parallel()
	f := step.NewFakeArgoFor(t, 100*time.Millisecond, false, 0)
	f.HoldOurOpAndRevokeToken()
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	a := newAgent(t, k)
	body := webBody(t, k, f, "0")
	rep := until(t, a, body, "finished", finished)
	if rep.Node.Phase != "Error" || !strings.Contains(rep.Node.Message, "kept rejecting the token") || !f.OurOpRunning() {
		t.Fatalf("first attempt %+v (operation running %v), want Error while the operation runs", rep.Node, f.OurOpRunning())
	}
	f.RestoreToken()
	body = webBody(t, k, f, "1")
	rep = until(t, a, body, "the retry follows the operation", func(r pt.Reply) bool {
		return r.Node.Phase == "Running" && strings.Contains(r.Node.Message, "following it instead of syncing again")
	})
	f.ReleaseOurOp()
	rep = until(t, a, body, "finished", finished)
	if rep.Node.Phase != "Succeeded" || !f.ShownFreshHealthy() || f.SyncRequests() != 1 {
		t.Errorf("retry: %+v, sync requests %d (want 1)", rep.Node, f.SyncRequests())
	}
}

// (d) Degraded fails the node with the resource and its message.
func TestPluginDegradedFails(t *testing.T) {
	t.Parallel()
	f := step.NewFakeArgoFor(t, 0, true, 0)
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	rep := until(t, newAgent(t, k), webBody(t, k, f, "0"), "finished", finished)
	if rep.Node.Phase != "Failed" || !strings.Contains(rep.Node.Message, "Deployment.apps ns/web (Degraded: web is Degraded)") ||
		!strings.Contains(rep.Result(), `"exitCode": 1`) {
		t.Errorf("%+v\nresult %s", rep.Node, rep.Result())
	}
}
