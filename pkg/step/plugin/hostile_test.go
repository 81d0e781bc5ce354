package plugin

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step"
	pt "github.com/deployctl/deployctl/pkg/step/plugin/plugintest"
)

// Hostile templates against the sidecar, one class each: nothing is read
// past its bound, nothing of a template reaches the log, finished results
// are bounded.

// A file a template names that is no file of that kind (/dev/zero as the
// CA, the token, the manifest) fails its node at once, read no further
// than a bound; the sidecar does not grow with it.
func TestHostileFilesRefused(t *testing.T) {
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	s, _ := newTestServer(t, Config{Exec: step.Exec, KubeURL: k.URL, KubeTokenFile: k.TokenFile})
	tok := t.TempDir() + "/token"
	if err := os.WriteFile(tok, []byte("tok-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(kv ...string) map[string]string {
		m := map[string]string{"ARGOCD_SERVER": "127.0.0.1:1", "ARGOCD_TOKEN_FILE": tok, "REQUEST_TIMEOUT": "1s"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	syncArgs := []string{"sync-and-wait", "--app", "web", "--sync-timeout", "1m", "--health-timeout", "1m"}
	for name, tmpl := range map[string]map[string]any{
		"CA":       pt.Template("validate", nil, []string{"validate", "--app", "web"}, env("ARGOCD_CA_FILE", "/dev/zero")),
		"token":    pt.Template("validate", nil, []string{"validate", "--app", "web"}, env("ARGOCD_TOKEN_FILE", "/dev/zero")),
		"manifest": pt.Template("sync-and-wait", []pt.Param{{Name: "app", Value: "web"}}, append(syncArgs, "--manifest", "/dev/zero"), env()),
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		body := k.Body(tmpl)
		var rep pt.Reply
		eventually(t, name+" answered", func() bool {
			_, rep = pt.Call(t, s, agentToken, body)
			return rep.Node.Phase != phaseRunning
		})
		runtime.ReadMemStats(&after)
		if rep.Node.Phase != phaseFailed || !strings.Contains(rep.Node.Message, "/dev/zero") || !strings.Contains(rep.Result(), `"exitCode": 3`) {
			t.Errorf("%s /dev/zero: %+v", name, rep.Node)
		}
		if grown := after.TotalAlloc - before.TotalAlloc; grown > 32<<20 {
			t.Errorf("%s /dev/zero: %d MiB allocated", name, grown>>20)
		}
	}
}

// syncBuffer is a log the jobs write concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// Every log line names its node (workflow, template, command, app) and
// carries nothing of the template's arguments: the manifest, with its
// Helm values and passwords, is one of them.
func TestLogCarriesNoPayload(t *testing.T) {
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	log := &syncBuffer{}
	s, fe := newTestServer(t, Config{KubeURL: k.URL, KubeTokenFile: k.TokenFile, Log: log})
	manifest := base64.StdEncoding.EncodeToString([]byte(`{"kind":"Application","spec":{"source":{"helm":{"values":"password: hunter2-s3cret"}}}}`))
	args := []string{"sync-and-wait", "--app", "web", "--manifest-base64=" + manifest, "--sync-timeout", "1m", "--health-timeout", "1m"}
	body := k.Body(pt.Template("sync-and-wait", []pt.Param{{Name: "app", Value: "web"}}, args, connEnv))
	runUntilExec(t, s, fe, body, 1)
	finishAndAnswer(t, s, fe, body, exitcode.OK)
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("log %q", log.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "ns/wf sync-and-wait sync-and-wait web: ") {
			t.Errorf("line does not name its node: %q", l)
		}
		// The manifest's start: 21 bytes encode to its first 28 characters.
		start := base64.StdEncoding.EncodeToString([]byte(`{"kind":"Application"`))
		for _, leak := range []string{start, "hunter2", "--manifest", "--sync-timeout"} {
			if strings.Contains(l, leak) {
				t.Errorf("line carries %q: %q", leak, l)
			}
		}
	}
	// A name that is not a plain name (a template's, which nothing
	// checks) is quoted: it cannot forge a line.
	odd := k.Body(pt.Template("t\nx: forged", nil, []string{"validate", "--app", "a"}, connEnv))
	pt.Call(t, s, agentToken, odd)
	eventually(t, "the odd node logs", func() bool { return strings.Contains(log.String(), "ns/wf \"t\\nx: forged\" validate a: ") })
	fe.codes <- exitcode.OK
}

// Finished results are bounded in bytes, not only in number: 30 calls of
// a validate with a large result keep at most MaxDoneBytes (the answered
// dropped first); a result over ResultLimit fails its node saying so.
func TestFinishedResultsBounded(t *testing.T) {
	resultOf := func(app string) int {
		if app == "huge" {
			return ResultLimit + 1
		}
		return 300 << 10
	}
	exec := func(_ context.Context, args []string, _ func(string) (string, bool), _ io.Writer) step.Outcome {
		return step.Outcome{Code: exitcode.OK, Summary: "validate: Healthy", Result: bytes.Repeat([]byte("r"), resultOf(args[2]))}
	}
	s, _ := newTestServer(t, Config{Exec: exec, MaxDoneBytes: 1 << 20})
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	for i := range 30 {
		body := k.Body(validateTemplate(fmt.Sprintf("a%d", i)))
		eventually(t, "finished", func() bool { _, rep := pt.Call(t, s, agentToken, body); return rep.Node.Phase != phaseRunning })
	}
	s.mu.Lock()
	kept, n := s.doneBytes, len(s.jobs)
	s.mu.Unlock()
	if kept > 1<<20 || n > 3 {
		t.Fatalf("kept %d bytes in %d finished jobs, bound 1 MiB", kept, n)
	}
	body := k.Body(validateTemplate("huge"))
	var rep pt.Reply
	eventually(t, "huge finished", func() bool { _, rep = pt.Call(t, s, agentToken, body); return rep.Node.Phase != phaseRunning })
	if rep.Node.Phase != phaseFailed || !strings.Contains(rep.Node.Message, "over the 1024 KiB a plugin node's result may hold") || len(rep.Result()) > 4096 {
		t.Fatalf("huge: %+v (%d bytes of result)", rep.Node, len(rep.Result()))
	}
}
