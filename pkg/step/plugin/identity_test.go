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

const startedAt = pt.StartedAt

// syncTemplate is sync-and-wait of app as Argo sends it for node
// "wf.deploy.APP", attempt 0.
func syncTemplate(app string) map[string]any {
	return attempt(app, "0")
}

func attempt(app, n string) map[string]any {
	return pt.AtNode(pt.Template("sync-and-wait", []pt.Param{{Name: "app", Value: app}},
		[]string{"sync-and-wait", "--app", app}, connEnv), "wf.deploy."+app, n)
}

func wantID(uid, node, at string) string {
	sum := sha256.Sum256([]byte(uid + "/" + node + "/" + at))
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

// The sync id comes from the node's name (its Retry parent's: the same for
// every attempt) and the workflow's start: a node-level retry (the next
// attempt, after the plugin answered Error) gets the same id and so
// adopts the operation; another node gets another; the new start of a
// workflow retry gives a new one, in this plugin or the next agent's.
func TestSyncIDFromNodeAndStart(t *testing.T) {
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	s, fe := kubeServer(t, k)
	body := k.Body(syncTemplate("web"))
	first := runUntilExec(t, s, fe, body, 1)
	if first != wantID("uid-1", "wf.deploy.web", startedAt) {
		t.Fatalf("sync id %q, want the node's", first)
	}
	if rep := finishAndAnswer(t, s, fe, body, exitcode.Transient); rep.Node.Phase != phaseError {
		t.Fatalf("phase %s", rep.Node.Phase)
	}
	// Node-level retry: attempt 1 of the same node.
	if second := runUntilExec(t, s, fe, k.Body(attempt("web", "1")), 2); second != first {
		t.Errorf("node-level retry got sync id %q, want %q (adopt)", second, first)
	}
	finishAndAnswer(t, s, fe, k.Body(attempt("web", "1")), exitcode.OK)
	if other := runUntilExec(t, s, fe, k.Body(syncTemplate("db")), 3); other == first || other != wantID("uid-1", "wf.deploy.db", startedAt) {
		t.Errorf("another node got sync id %q (web's %q)", other, first)
	}
	finishAndAnswer(t, s, fe, k.Body(syncTemplate("db")), exitcode.OK)
	// Workflow retry: Argo sets a new startedAt and makes the node anew,
	// attempt 0 first: the same template as the first call's.
	const later = "2026-11-24T05:00:00Z"
	k.SetStartedAt(later)
	if third := runUntilExec(t, s, fe, body, 4); third != wantID("uid-1", "wf.deploy.web", later) {
		t.Errorf("after a workflow retry the sync id is %q (before %q): it must be new", third, first)
	}
	s2, fe2 := kubeServer(t, k) // the next agent's plugin
	if again := runUntilExec(t, s2, fe2, body, 1); again != wantID("uid-1", "wf.deploy.web", later) {
		t.Errorf("a restarted plugin derived %q", again)
	}
}

// The id needs nothing of the node status: compressed or offloaded to
// Argo's database (past about 1,150 apps), the node gets the same id.
func TestNodeStatusNotRead(t *testing.T) {
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	k.SetNode(pt.Node{ID: "wf-1", Name: "wf.deploy.web", Type: "Plugin", Phase: "Running"})
	k.Offload()
	s, fe := kubeServer(t, k)
	if id := runUntilExec(t, s, fe, k.Body(syncTemplate("web")), 1); id != wantID("uid-1", "wf.deploy.web", startedAt) {
		t.Errorf("offloaded: sync id %q", id)
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

// A workflow whose start is not persisted yet (the controller may hand the
// agent a task first) is read again until it is.
func TestStartAppearsLate(t *testing.T) {
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	k.SetStartedAt("")
	s, fe := kubeServer(t, k)
	body := k.Body(syncTemplate("web"))
	pt.Call(t, s, agentToken, body)
	time.Sleep(50 * time.Millisecond)
	k.SetStartedAt(startedAt)
	if id := runUntilExec(t, s, fe, body, 1); id != wantID("uid-1", "wf.deploy.web", startedAt) {
		t.Errorf("sync id %q", id)
	}
}

// A workflow without its start yet, or an API fault, is read again after
// 0.5 s, the wait doubling to 4 s (each try reads the whole Workflow,
// which at 1,000 apps is about 1 MB), for 30 s (issue 24).
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
		{"never started", func(k *pt.Kube) { k.SetStartedAt("") }, phaseError, "workflow ns/wf has no status.startedAt yet"},
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
				t.Errorf("the step ran without its sync id")
			}
		})
	}
}

// The agent's container restarts after the final answer, before the
// controller took it: the node's attempt is asked for again and gets the
// same answer; the step does not run again.
func TestSameNodeAskedAgain(t *testing.T) {
	k := pt.NewKube(t, "ns", "wf", "uid-1")
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

// A sync-and-wait template must name its node, as Argo fills it: one of
// an older deployctl (no node) or one Argo did not fill fails the node
// (exit 3) before anything runs. validate and teardown need none.
func TestTemplateNamesItsNode(t *testing.T) {
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	s, fe := kubeServer(t, k)
	tmpl := func(node, n string) []byte {
		return k.Body(pt.AtNode(pt.Template("sync-and-wait", nil, []string{"sync-and-wait", "--app", "web"}, connEnv), node, n))
	}
	for _, c := range []struct {
		body []byte
		want string
	}{
		{tmpl("", "0"), `plugin.deployctl.node is empty`},
		{tmpl("{{node.name}}", "0"), `plugin.deployctl.node is "{{node.name}}", not filled by Argo`},
		{tmpl("wf.deploy.web", "{{retries}}"), `plugin.deployctl.attempt is "{{retries}}", not filled by Argo`},
	} {
		_, rep := pt.Call(t, s, agentToken, c.body)
		if rep.Node == nil || rep.Node.Phase != phaseFailed || !strings.Contains(rep.Node.Message, c.want) || !strings.Contains(rep.Result(), `"exitCode": 3`) {
			t.Errorf("%+v, want Failed (exit 3) mentioning %q", rep.Node, c.want)
		}
	}
	v := pt.AtNode(pt.Template("validate", nil, []string{"validate", "--app", "web"}, connEnv), "", "")
	if _, rep := pt.Call(t, s, agentToken, k.Body(v)); rep.Node == nil || rep.Node.Phase != phaseRunning {
		t.Errorf("validate without a node: %+v", rep.Node)
	}
	eventually(t, "validate runs", func() bool {
		fe.mu.Lock()
		defer fe.mu.Unlock()
		return len(fe.calls) == 1
	})
}
