package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/deployctl/deployctl/pkg/exitcode"
	pt "github.com/deployctl/deployctl/pkg/step/plugin/plugintest"
)

const startedAt = "2026-11-24T04:00:00Z"

func syncTemplate(app string) map[string]any {
	return pt.Template("sync-and-wait", []pt.Param{{Name: "app", Value: app}},
		[]string{"sync-and-wait", "--app", app}, connEnv)
}

func pluginNode(id, app, phase string) pt.Node {
	return pt.Node{ID: id, Name: "deploy." + app, Type: "Plugin", TemplateRef: map[string]string{"name": "deployctl-step", "template": "sync-and-wait"},
		Phase: phase, StartedAt: startedAt, Inputs: &pt.Inputs{Parameters: []pt.Param{{Name: "app", Value: app}}}}
}

func wantID(uid, anchor, at string) string {
	sum := sha256.Sum256([]byte(uid + "/" + anchor + "/" + at))
	return hex.EncodeToString(sum[:])[:16]
}

func kubeServer(t *testing.T, k *pt.Kube) (*Server, *fakeExec) {
	return newTestServer(t, Config{KubeURL: k.URL, KubeTokenFile: k.TokenFile})
}

// runUntilExec calls until the step runs, returning the sync id it got.
func runUntilExec(t *testing.T, s *Server, fe *fakeExec, body []byte, n int) string {
	t.Helper()
	eventually(t, "the step runs", func() bool {
		pt.Call(t, s, agentToken, body)
		fe.mu.Lock()
		defer fe.mu.Unlock()
		return len(fe.env) >= n
	})
	fe.mu.Lock()
	defer fe.mu.Unlock()
	return fe.env[n-1]["SYNC_ID"]
}

// finishAndAnswer ends the running step with code and returns the final reply.
func finishAndAnswer(t *testing.T, s *Server, fe *fakeExec, body []byte, code int) pt.Reply {
	t.Helper()
	fe.codes <- code
	var rep pt.Reply
	eventually(t, "final reply", func() bool {
		_, rep = pt.Call(t, s, agentToken, body)
		return rep.Node.Phase != phaseRunning
	})
	return rep
}

// The sync id comes from the node's Retry parent: a node-level retry (a
// new child, after the plugin answered Error) gets the same id and so
// adopts the operation; the parent's new startedAt after a workflow retry
// gives a new one.
func TestSyncIDFromRetryParent(t *testing.T) {
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	k.SetNode(pt.Node{ID: "wf-r", Type: "Retry", Phase: "Running", StartedAt: startedAt, Children: []string{"wf-1"}})
	k.SetNode(pluginNode("wf-1", "web", "Running"))
	k.SetNode(pluginNode("wf-other", "db", "Running"))
	s, fe := kubeServer(t, k)
	body := k.Body(syncTemplate("web"))
	first := runUntilExec(t, s, fe, body, 1)
	if first != wantID("uid-1", "wf-r", startedAt) {
		t.Fatalf("sync id %q, want the Retry parent's", first)
	}
	if rep := finishAndAnswer(t, s, fe, body, exitcode.Transient); rep.Node.Phase != phaseError {
		t.Fatalf("phase %s", rep.Node.Phase)
	}
	// Node-level retry: the failed child is Error, a new one runs.
	k.SetPhase("wf-1", "Error")
	k.SetNode(pt.Node{ID: "wf-r", Type: "Retry", Phase: "Running", StartedAt: startedAt, Children: []string{"wf-1", "wf-2"}})
	k.SetNode(pluginNode("wf-2", "web", "Pending"))
	if second := runUntilExec(t, s, fe, body, 2); second != first {
		t.Errorf("node-level retry got sync id %q, want %q (adopt)", second, first)
	}
	s.mu.Lock()
	j := s.jobs["uid-1/"+mustKey(t, body)]
	s.mu.Unlock()
	if j.node != "wf-2" {
		t.Errorf("the retry's job runs for node %q, want wf-2", j.node)
	}
	finishAndAnswer(t, s, fe, body, exitcode.OK)
	// Workflow retry: the Retry parent is reset with a new startedAt (and
	// a new agent, so a new server).
	k.SetNode(pt.Node{ID: "wf-r", Type: "Retry", Phase: "Running", StartedAt: "2026-11-24T05:00:00Z", Children: []string{"wf-3"}})
	k.SetNode(pluginNode("wf-3", "web", "Pending"))
	k.SetPhase("wf-2", "Failed")
	s2, fe2 := kubeServer(t, k)
	if third := runUntilExec(t, s2, fe2, body, 1); third == first || third != wantID("uid-1", "wf-r", "2026-11-24T05:00:00Z") {
		t.Errorf("after a workflow retry the sync id is %q (before %q): it must be new", third, first)
	}
}

func mustKey(t *testing.T, body []byte) string {
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	k, err := templateKey(req.Template)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A node without a Retry parent names the sync itself; one that appears in
// the status only after the first call is found by the retried lookup.
func TestNodeAppearsLate(t *testing.T) {
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	s, fe := kubeServer(t, k)
	body := k.Body(syncTemplate("web"))
	pt.Call(t, s, agentToken, body)
	time.Sleep(50 * time.Millisecond) // the controller persists the node a little later
	k.SetNode(pluginNode("wf-1", "web", "Pending"))
	if id := runUntilExec(t, s, fe, body, 1); id != wantID("uid-1", "wf-1", startedAt) {
		t.Errorf("sync id %q", id)
	}
}

// A node not yet in the status is looked up again after 0.5 s, the wait
// doubling to 4 s (each try reads the whole Workflow, which at 1,000 apps
// is about 1 MB), for 30 s (issue 24).
func TestLookupBacksOff(t *testing.T) {
	var got []time.Duration
	wait, total := 500*time.Millisecond, time.Duration(0)
	for total < 30*time.Second {
		got = append(got, wait)
		total += wait
		wait = nextLookupWait(wait, 500*time.Millisecond)
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second,
		4 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", got, want)
	}
	s, err := New(context.Background(), Config{Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if s.cfg.LookupWindow != 30*time.Second || s.cfg.LookupInterval != 500*time.Millisecond {
		t.Errorf("default lookup window %v, interval %v", s.cfg.LookupWindow, s.cfg.LookupInterval)
	}
}

// What the lookup cannot get past: each ends the node with the reason.
func TestLookupFailures(t *testing.T) {
	cases := []struct {
		name  string
		setup func(k *pt.Kube)
		phase string
		want  string
	}{
		{"forbidden", func(k *pt.Kube) { k.FailWith(http.StatusForbidden) }, phaseFailed,
			"the plugin's ServiceAccount deployctl-executor-plugin needs get on workflows.argoproj.io in namespace ns"},
		{"token rejected", func(k *pt.Kube) { k.FailWith(http.StatusUnauthorized) }, phaseFailed,
			"rejected the token of the plugin's ServiceAccount deployctl-executor-plugin"},
		{"workflow gone", func(k *pt.Kube) { k.FailWith(http.StatusNotFound) }, phaseFailed, "the workflow is gone"},
		{"API down", func(k *pt.Kube) { k.FailWith(http.StatusServiceUnavailable) }, phaseError, "HTTP 503"},
		{"no such node", func(k *pt.Kube) { k.SetNode(pluginNode("wf-1", "other", "Running")) }, phaseError,
			`no unfinished Plugin node of template "sync-and-wait" with these inputs`},
		{"node finished", func(k *pt.Kube) { k.SetNode(pluginNode("wf-1", "web", "Succeeded")) }, phaseError, "no unfinished Plugin node"},
		{"replaced", func(k *pt.Kube) { k.UID = "uid-2" }, phaseFailed, "has uid uid-2, not uid-1: it was replaced"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := pt.NewKube(t, "ns", "wf", "uid-1")
			body := k.Body(syncTemplate("web"))
			c.setup(k)
			s, fe := kubeServer(t, k)
			var rep pt.Reply
			eventually(t, "final reply", func() bool {
				_, rep = pt.Call(t, s, agentToken, body)
				return rep.Node.Phase != phaseRunning
			})
			if rep.Node.Phase != c.phase || !strings.Contains(rep.Node.Message, c.want) {
				t.Errorf("%+v, want %s mentioning %q", rep.Node, c.phase, c.want)
			}
			if len(fe.calls) != 0 {
				t.Errorf("the step ran without its node")
			}
		})
	}
}

// Argo compresses the nodes of a large workflow; offloaded ones are out of
// reach and said so.
func TestCompressedAndOffloadedNodes(t *testing.T) {
	obj := compressed(t, map[string]pt.Node{"wf-1": pluginNode("wf-1", "web", "Running")})
	got, err := statusNodes(obj)
	if err != nil || got["wf-1"] == nil || got["wf-1"].ID != "wf-1" {
		t.Fatalf("compressed nodes: %v %v", got, err)
	}
	obj.Status.OffloadNodeStatusVersion = "fnv:123"
	if _, err := statusNodes(obj); err == nil || !strings.Contains(err.Error(), "offloaded") {
		t.Errorf("offloaded: %v", err)
	}
}

// The agent's container restarts after the final answer, before the
// controller took it: the node, still Running in the status, is asked for
// again and gets the same answer; the step does not run again.
func TestSameNodeAskedAgain(t *testing.T) {
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	k.SetNode(pluginNode("wf-1", "web", "Running"))
	s, fe := kubeServer(t, k)
	body := k.Body(syncTemplate("web"))
	runUntilExec(t, s, fe, body, 1)
	first := finishAndAnswer(t, s, fe, body, exitcode.Failure)
	var again pt.Reply
	eventually(t, "the same answer", func() bool {
		_, again = pt.Call(t, s, agentToken, body)
		return again.Node.Phase != phaseRunning
	})
	if again.Node.Phase != first.Node.Phase || again.Result() != first.Result() || again.Node.Message != first.Node.Message {
		t.Errorf("asked again: %+v, first %+v", again.Node, first.Node)
	}
	fe.mu.Lock()
	defer fe.mu.Unlock()
	if len(fe.calls) != 1 {
		t.Errorf("the step ran %d times for one node", len(fe.calls))
	}
}
