package plugin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step"
	pt "github.com/deployctl/deployctl/pkg/step/plugin/plugintest"
)

const agentToken = "agent-token"

var connEnv = map[string]string{"ARGOCD_SERVER": "argocd-server.argocd.svc:443"}

// fakeExec stands in for the step: it logs a line, then ends with the code
// the test sends, or blocks until the server stops.
type fakeExec struct {
	mu    sync.Mutex
	calls [][]string
	env   []map[string]string
	codes chan int
}

func (f *fakeExec) exec(ctx context.Context, args []string, env func(string) (string, bool), log io.Writer) step.Outcome {
	f.mu.Lock()
	f.calls = append(f.calls, args)
	id, _ := env("SYNC_ID")
	f.env = append(f.env, map[string]string{"SYNC_ID": id})
	f.mu.Unlock()
	fmt.Fprintf(log, "04:50:00.000 deploystep: waiting for %s to become Healthy\n", args[2])
	select {
	case code := <-f.codes:
		return step.FailedOutcome(args[0], code, fmt.Errorf("ended with %d: Deployment.apps ns/web (Degraded: crash loop)", code))
	case <-ctx.Done():
		return step.FailedOutcome(args[0], exitcode.Transient, ctx.Err())
	}
}

func newTestServer(t *testing.T, cfg Config) (*Server, *fakeExec) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	fe := &fakeExec{codes: make(chan int)}
	cfg.Token = agentToken
	if cfg.Exec == nil {
		cfg.Exec = fe.exec
	}
	if cfg.LookupWindow == 0 {
		cfg.LookupWindow, cfg.LookupInterval = 200*time.Millisecond, 20*time.Millisecond
	}
	s, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); s.Wait() })
	return s, fe
}

func validateTemplate(app string) map[string]any {
	return pt.Template("validate", []pt.Param{{Name: "app", Value: app}}, []string{"validate", "--app", app}, connEnv)
}

// eventually polls cond; the bound only keeps a broken server from hanging.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for limit := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(limit) {
			t.Fatalf("never: %s", what)
		}
	}
}

func TestAuthAndRoutes(t *testing.T) {
	s, _ := newTestServer(t, Config{})
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	body := k.Body(validateTemplate("web"))
	for _, tok := range []string{"", "wrong", agentToken + "x", strings.ToUpper(agentToken)} {
		if code, _ := pt.Call(t, s, tok, body); code != http.StatusForbidden {
			t.Errorf("token %q: HTTP %d, want 403", tok, code)
		}
	}
	for _, r := range []*http.Request{
		httptest.NewRequest(http.MethodGet, executePath, nil),
		httptest.NewRequest(http.MethodPost, "/api/v1/template.other", bytes.NewReader(body)),
		httptest.NewRequest(http.MethodPost, "/", nil),
	} {
		r.Header.Set("Authorization", "Bearer "+agentToken)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		if rec.Code != http.StatusNotFound {
			t.Errorf("%s %s: HTTP %d, want 404", r.Method, r.URL.Path, rec.Code)
		}
	}
	if s.runningJobs() != 0 {
		t.Errorf("a refused call started a job")
	}
}

// Input an attacker or a broken agent sends: each fails the node with a
// reason (exit 3's class), none starts a job, none panics.
func TestBadInputFailsTheNode(t *testing.T) {
	s, _ := newTestServer(t, Config{})
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	tmpl := func(args ...string) []byte {
		return k.Body(pt.Template("sync-and-wait", nil, args, connEnv))
	}
	huge := k.Body(pt.Template("x", nil, []string{"validate", "--app", strings.Repeat("a", BodyLimit)}, connEnv))
	cases := []struct {
		body []byte
		want string
	}{
		{[]byte(`{"workflow":`), "not the executor plugin's JSON"},
		{[]byte(`[1,2]`), "not the executor plugin's JSON"},
		{[]byte(`{"workflow":{"metadata":{"name":"wf","namespace":"ns","uid":"u"}}}`), "no template"},
		{[]byte(`{"workflow":{"metadata":{"name":"wf","namespace":"ns"}},"template":{"plugin":{"deployctl":{"args":["validate"]}}}}`), "names no workflow"},
		{k.Body(map[string]any{"name": "t", "plugin": map[string]any{"deployctl": map[string]any{"args": []string{"validate"}, "image": "evil"}}}), `unknown field "image"`},
		{k.Body(map[string]any{"name": "t", "plugin": map[string]any{"deployctl": map[string]any{"args": "validate"}}}), "cannot unmarshal"},
		{k.Body(map[string]any{"name": "t", "plugin": map[string]any{"deployctl": map[string]any{}}}), "args is empty"},
		{tmpl("sync-and-wait", "--app", "web", "--rm-rf"), "flag provided but not defined: -rm-rf"},
		{tmpl("sync-and-wait", "--app", "web", "--sync-id", "0123456789abcdef"), "--sync-id is the plugin's"},
		{tmpl("sync-and-wait", "--app", "web", "--sync-id="), "--sync-id is the plugin's"}, // empty: it would replace the derived id
		{tmpl("sync-and-wait", "--app", "web", "-sync-id", ""), "--sync-id is the plugin's"},
		{tmpl("validate", "--app", "web", "--sync-id=0123456789abcdef"), "--sync-id is the plugin's"},
		{tmpl("deploy"), "unknown command"},
		{tmpl("validate", "-h"), "usage text"},
		{k.Body(pt.Template("t", nil, []string{"validate", "--app", "a"}, map[string]string{"SYNC_ID": "0123456789abcdef"})), "SYNC_ID is the plugin's"},
		{huge, "larger than the 1 MiB limit"},
		{tmpl(append([]string{"validate"}, strings.Split(strings.Repeat("--app a ", MaxValidateApps+1), " ")[:2*(MaxValidateApps+1)]...)...), "a plugin node validates at most 1000"},
	}
	for _, c := range cases {
		code, rep := pt.Call(t, s, agentToken, c.body)
		if code != http.StatusOK || rep.Node == nil || rep.Node.Phase != phaseFailed || !strings.Contains(rep.Node.Message, c.want) || rep.Requeue != "" {
			t.Errorf("%.80s: HTTP %d %+v, want Failed mentioning %q", c.body, code, rep.Node, c.want)
		}
		if !strings.Contains(rep.Result(), `"exitCode": 3`) {
			t.Errorf("%.80s: result %q, want exit 3", c.body, rep.Result())
		}
	}
	if s.runningJobs() != 0 || len(s.jobs) != 0 {
		t.Errorf("bad input started jobs: %d", len(s.jobs))
	}
}

// A template of another plugin, or none, is not ours: {} (the agent asks
// the next plugin).
func TestOtherTemplatesAreNotOurs(t *testing.T) {
	s, _ := newTestServer(t, Config{})
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	for _, tmpl := range []any{
		map[string]any{"name": "t", "plugin": map[string]any{"slack": map[string]any{"text": "hi"}}},
		map[string]any{"name": "t", "container": map[string]any{"image": "x"}},
	} {
		code, rep := pt.Call(t, s, agentToken, k.Body(tmpl))
		if code != http.StatusOK || rep.Node != nil || rep.Requeue != "" {
			t.Errorf("%v: HTTP %d %+v, want {}", tmpl, code, rep)
		}
	}
}

// Running at once, with the latest log line; then the exit code's phase,
// the summary as message and the result as output, without requeue.
func TestReplyMapping(t *testing.T) {
	for code, phase := range map[int]string{exitcode.OK: phaseSucceeded, exitcode.Transient: phaseError,
		exitcode.Failure: phaseFailed, exitcode.Timeout: phaseFailed, exitcode.Partial: phaseFailed} {
		s, fe := newTestServer(t, Config{Requeue: 2 * time.Second})
		k := pt.NewKube(t, "ns", "wf", "uid-1")
		body := k.Body(validateTemplate("web"))
		_, rep := pt.Call(t, s, agentToken, body)
		if rep.Node == nil || rep.Node.Phase != phaseRunning || rep.Requeue != "2s" {
			t.Fatalf("first call: %+v", rep)
		}
		eventually(t, "progress shown", func() bool {
			_, rep = pt.Call(t, s, agentToken, body)
			return rep.Node.Message == "waiting for web to become Healthy"
		})
		fe.codes <- code
		eventually(t, "finished", func() bool {
			_, rep = pt.Call(t, s, agentToken, body)
			return rep.Node.Phase != phaseRunning
		})
		if rep.Node.Phase != phase || rep.Requeue != "" || !strings.Contains(rep.Node.Message, "Deployment.apps ns/web (Degraded: crash loop)") ||
			!strings.Contains(rep.Result(), fmt.Sprintf(`"exitCode": %d`, code)) {
			t.Errorf("exit %d: %+v requeue %q result %q, want %s", code, rep.Node, rep.Requeue, rep.Result(), phase)
		}
		if len(fe.calls) != 1 {
			t.Errorf("exit %d: the step ran %d times for one node", code, len(fe.calls))
		}
	}
}

// 10,000 distinct templates: invalid ones start nothing; valid ones start
// at most MaxJobs jobs, the rest are answered Error (retried by the node's
// retryStrategy) and leave nothing behind.
func TestJobTableIsBounded(t *testing.T) {
	s, fe := newTestServer(t, Config{MaxJobs: 100})
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 10000 {
		pt.Call(t, s, agentToken, k.Body(pt.Template("t", nil, []string{"validate", "--app", fmt.Sprintf("a%d", i), "--bogus"}, connEnv)))
	}
	if len(s.jobs) != 0 {
		t.Fatalf("invalid templates left %d jobs", len(s.jobs))
	}
	refused := 0
	for i := range 10000 {
		_, rep := pt.Call(t, s, agentToken, k.Body(validateTemplate(fmt.Sprintf("a%d", i))))
		if rep.Node.Phase == phaseError {
			refused++
			if !strings.Contains(rep.Node.Message, "its limit (100 nodes") {
				t.Fatalf("refusal %q", rep.Node.Message)
			}
		}
	}
	if refused != 9900 || s.runningJobs() != 100 || len(s.jobs) != 100 {
		t.Fatalf("refused %d, running %d, table %d; want 9900, 100, 100", refused, s.runningJobs(), len(s.jobs))
	}
	// Finished jobs stay to answer their node; new nodes start beside them.
	for range 100 {
		fe.codes <- exitcode.OK
	}
	eventually(t, "all finished", func() bool { return s.runningJobs() == 0 })
	for i := 100; i < 150; i++ {
		pt.Call(t, s, agentToken, k.Body(validateTemplate(fmt.Sprintf("a%d", i))))
	}
	s.mu.Lock()
	n := len(s.jobs)
	s.mu.Unlock()
	if n != 150 || s.runningJobs() != 50 {
		t.Errorf("table %d running %d after 50 more", n, s.runningJobs())
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("heap in use: %d KiB before, %d KiB after 20,000 calls", before.HeapInuse>>10, after.HeapInuse>>10)
}

// Whatever the body, the reply is 200 with {} or a node, never a panic;
// nothing invalid starts a job. (go test -fuzz FuzzExecute, briefly)
func FuzzExecute(f *testing.F) {
	k := pt.NewKube(f, "ns", "wf", "uid-1")
	f.Add(k.Body(validateTemplate("web")))
	f.Add(k.Body(pt.Template("sync-and-wait", nil, []string{"sync-and-wait", "--app", "a", "--check", "http:x"}, connEnv)))
	f.Add([]byte(`{"workflow":{"metadata":{"uid":"u","name":"n","namespace":"s"}},"template":{"plugin":{"deployctl":{"args":["teardown"],"env":[{"name":"A"},{"name":"A"}]}}}}`))
	f.Add([]byte(`{"template":{"plugin":{"deployctl":null}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s, err := New(ctx, Config{Token: agentToken, Exec: func(context.Context, []string, func(string) (string, bool), io.Writer) step.Outcome {
			return step.FailedOutcome("x", exitcode.OK, nil)
		}, KubeURL: "http://127.0.0.1:1", LookupWindow: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		code, rep := pt.Call(t, s, agentToken, body)
		if code != http.StatusOK {
			t.Fatalf("HTTP %d", code)
		}
		if rep.Node != nil && rep.Node.Phase == phaseFailed && len(s.jobs) != 0 {
			t.Fatalf("a failed call left a job")
		}
		cancel()
		s.Wait()
	})
}

// Past MaxJobs finished jobs, the answered ones go first: a node still
// waiting for its final reply keeps it.
func TestFinishedJobsEviction(t *testing.T) {
	s, fe := newTestServer(t, Config{MaxJobs: 2})
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	body := func(i int) []byte { return k.Body(validateTemplate(fmt.Sprintf("a%d", i))) }
	finishNext := func() { fe.codes <- exitcode.OK }
	pt.Call(t, s, agentToken, body(1))
	finishNext()
	eventually(t, "a1 done", func() bool { return s.runningJobs() == 0 })
	if _, rep := pt.Call(t, s, agentToken, body(1)); rep.Node.Phase != phaseSucceeded {
		t.Fatalf("a1: %+v", rep.Node)
	}
	for _, i := range []int{2, 3} { // finished, never answered
		pt.Call(t, s, agentToken, body(i))
		finishNext()
		eventually(t, "done", func() bool { return s.runningJobs() == 0 })
	}
	s.mu.Lock()
	_, has1 := s.jobs["uid-1/"+mustKey(t, body(1))]
	_, has2 := s.jobs["uid-1/"+mustKey(t, body(2))]
	n := len(s.jobs)
	s.mu.Unlock()
	if has1 || !has2 || n != 2 {
		t.Errorf("kept %d jobs, answered a1 kept %v, unanswered a2 kept %v", n, has1, has2)
	}
	if _, rep := pt.Call(t, s, agentToken, body(2)); rep.Node.Phase != phaseSucceeded || len(fe.calls) != 3 {
		t.Errorf("a2: %+v after %d runs", rep.Node, len(fe.calls))
	}
}

// A stopping server (SIGTERM: its pod is being deleted) keeps answering: a
// running job as before, to its real end; a new node Running without a job
// (the next agent's plugin runs it). A refused call would fail the node.
func TestDrainKeepsAnswering(t *testing.T) {
	s, fe := newTestServer(t, Config{})
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	old := k.Body(validateTemplate("web"))
	if _, rep := pt.Call(t, s, agentToken, old); rep.Node == nil || rep.Node.Phase != phaseRunning {
		t.Fatalf("first call: %+v", rep)
	}
	eventually(t, "job started", func() bool { fe.mu.Lock(); defer fe.mu.Unlock(); return len(fe.calls) == 1 })
	s.Drain()
	_, rep := pt.Call(t, s, agentToken, k.Body(validateTemplate("api")))
	if rep.Node == nil || rep.Node.Phase != phaseRunning || rep.Requeue == "" || !strings.Contains(rep.Node.Message, "stopping") {
		t.Fatalf("new node while draining: %+v", rep)
	}
	fe.codes <- exitcode.OK
	eventually(t, "the running job's end answered", func() bool {
		_, rep = pt.Call(t, s, agentToken, old)
		return rep.Node.Phase != phaseRunning
	})
	if rep.Node.Phase != phaseSucceeded {
		t.Errorf("running job while draining ended %+v", rep.Node)
	}
	fe.mu.Lock()
	defer fe.mu.Unlock()
	if len(fe.calls) != 1 {
		t.Errorf("%d steps ran, want 1 (none for the node that came while draining)", len(fe.calls))
	}
}
