package insight

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/redact"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/exitcode"
)

const bearer = "insight-bearer-93be01c7d4"

// Issue 11, secrets in output: what the cluster says (a run's message, a
// step's result, an Application's health) reaches status and explain, text
// and json, masked: URL passwords, bearer credentials and the kubeconfig's
// known credentials.
func TestStatusAndExplainMaskCredentials(t *testing.T) {
	out := minimal(t)
	wf := failedDeploy(t, nil)
	wf.Status.Message = "clone of https://bob:hunter2hunter2@git.example.com/p.git failed"
	for id, n := range wf.Status.Nodes {
		if n.Outputs == nil {
			continue
		}
		for i, p := range n.Outputs.Parameters {
			if p.Value != nil { // the step's result: its message is what explain shows
				v := strings.ReplaceAll(p.Value.String(), "0/1 ready", "0/1 ready (Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload)")
				n.Outputs.Parameters[i].Value = wfv1.AnyStringPtr(v)
			}
		}
		wf.Status.Nodes[id] = n
	}
	cl := clients([]runtime.Object{wf, out.WorkflowTemplates[dag.Deploy]},
		app("database", "Synced", "Degraded", "probe with "+bearer+" failed", "Succeeded"))
	secrets := &redact.Set{}
	secrets.Add(bearer)
	r, err := Load(context.Background(), cl, Options{Namespace: "argo", Now: now, Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	for _, format := range []string{"text", "json"} {
		if err := r.WriteStatus(&all, format); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"database", "web"} {
			e, err := r.Explain(n)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Write(&all, r, format); err != nil {
				t.Fatal(err)
			}
		}
	}
	text := all.String()
	for _, leak := range []string{"hunter2hunter2", "eyJhbGciOiJIUzI1NiJ9", bearer} {
		if strings.Contains(text, leak) {
			t.Errorf("the output holds %q:\n%s", leak, text)
		}
	}
	for _, shown := range []string{"https://REDACTED@git.example.com/p.git", "probe with REDACTED failed", "0/1 ready (Authorization: Bearer REDACTED)"} {
		if !strings.Contains(text, shown) {
			t.Errorf("the output lacks %q: the cluster's text did not reach it\n%s", shown, text)
		}
	}
}

// echoServer answers every request with a 500 whose Status message echoes
// the Authorization header and the bare token; it counts the requests that
// could write.
func echoServer(t *testing.T) (*httptest.Server, func() (seen, writes int)) {
	var mu sync.Mutex
	seen, writes := 0, 0
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		mu.Lock()
		if strings.Contains(auth, bearer) {
			seen++
		}
		if r.Method != http.MethodGet {
			writes++
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":500,"message":"you sent %s (token %s)"}`,
			auth, strings.TrimPrefix(auth, "Bearer "))
	}))
	t.Cleanup(srv.Close)
	return srv, func() (int, int) { mu.Lock(); defer mu.Unlock(); return seen, writes }
}

func kubeconfigFor(url string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: %s}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`, url, bearer)
}

// Issue 11, secrets in output: an API server echoing the credentials in
// its error gets them into neither status's nor explain's error, whether
// the kubeconfig is a file or KUBECONFIG_DATA; nothing is written.
func TestStatusHostileServer(t *testing.T) {
	srv, counts := echoServer(t)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfigFor(srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG_PATH", "")
	for name, f := range map[string]*Source{
		"file": {Kubeconfig: path},
		"data": {},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("KUBECONFIG_DATA", "")
			if name == "data" {
				t.Setenv("KUBECONFIG_DATA", base64.StdEncoding.EncodeToString([]byte(kubeconfigFor(srv.URL))))
			}
			before, _ := counts()
			_, err := f.Load(context.Background(), "minimal-deploy-x1")
			if err == nil {
				t.Fatal("want an error")
			}
			if seen, _ := counts(); seen == before {
				t.Fatal("the server never saw the token: the test proves nothing")
			}
			if strings.Contains(err.Error(), bearer) || !strings.Contains(err.Error(), "REDACTED") {
				t.Errorf("error: %v", err)
			}
		})
	}
	if _, writes := counts(); writes != 0 {
		t.Errorf("status wrote to the cluster: %d requests", writes)
	}
}

// Issue 11, bounds: the kubeconfig status and explain read is bounded,
// from a file, KUBECONFIG_DATA or kubectl's KUBECONFIG: exit 3 naming the
// limit, before any request.
func TestStatusKubeconfigBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "kubeconfig")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(readlimit.Secret + 1)
	f.Close()
	t.Setenv("KUBECONFIG_PATH", "")
	t.Setenv("KUBECONFIG_DATA", "")
	t.Setenv("KUBECONFIG", "")

	_, err = (&Source{Kubeconfig: big}).Load(context.Background(), "x")
	if exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), big+": larger than the 1 MiB limit") {
		t.Errorf("--kubeconfig: exit %d: %v", exitcode.Of(err), err)
	}

	t.Setenv("KUBECONFIG_DATA", strings.Repeat("QUJD", int(readlimit.Secret/3)+2))
	_, err = (&Source{}).Load(context.Background(), "x")
	if exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), "KUBECONFIG_DATA: the decoded kubeconfig is larger than the 1 MiB limit") {
		t.Errorf("KUBECONFIG_DATA: exit %d: %v", exitcode.Of(err), err)
	}

	t.Setenv("KUBECONFIG_DATA", "")
	t.Setenv("KUBECONFIG", big)
	_, err = (&Source{}).Load(context.Background(), "x")
	if exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), big+": larger than the 1 MiB limit") {
		t.Errorf("KUBECONFIG: exit %d: %v", exitcode.Of(err), err)
	}
	t.Setenv("KUBECONFIG", "/dev/zero")
	_, err = (&Source{}).Load(context.Background(), "x")
	if exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), "/dev/zero: not a regular file") {
		t.Errorf("KUBECONFIG=/dev/zero: exit %d: %v", exitcode.Of(err), err)
	}
}
