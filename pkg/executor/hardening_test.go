package executor

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

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/pkg/exitcode"
)

// Credentials of the hostile-server tests: the kubeconfig's bearer token
// and the Argo CD token of the secrets directory.
const (
	bearerToken = "kube-bearer-7f3a9c2e5b1d4086"
	argoToken   = "argocd-api-token-51c8e0d2a9"
)

// hostile is an API server that records every request and answers with
// errors echoing what it was sent: the Authorization header verbatim, the
// bare token, and the Argo CD token (as a server echoing an applied Secret
// would).
type hostile struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string // "METHOD PATH"
	auth     int      // requests that carried the bearer token
}

// newHostile: with versionOK, /version answers (so preflight goes on to
// the credentials check, which gets a JSON Status echoing the bare token);
// without, /version gets a plain-text 500 echoing the header.
func newHostile(t *testing.T, versionOK bool) *hostile {
	h := &hostile{}
	// TLS: clientcmd puts credentials only on TLS transports.
	h.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		h.mu.Lock()
		h.requests = append(h.requests, r.Method+" "+r.URL.Path)
		if strings.Contains(auth, bearerToken) {
			h.auth++
		}
		h.mu.Unlock()
		w.Header().Add("Warning", fmt.Sprintf(`299 - "request authorized by %s"`, auth))
		switch {
		case r.URL.Path == "/version" && versionOK:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"major":"1","minor":"30","gitVersion":"v1.30.0"}`)
		case r.URL.Path == "/version":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "upstream refused. Authorization: %s; stored %s; https://admin:%s@proxy.internal/", auth, argoToken, strings.TrimPrefix(auth, "Bearer "))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":500,"reason":"InternalError","message":"token %s rejected (%s); secret %s"}`,
				strings.TrimPrefix(auth, "Bearer "), auth, argoToken)
		}
	}))
	t.Cleanup(h.Close)
	return h
}

// writes are the requests that could change the cluster: anything but a
// read or one of the questions preflight asks (reviews persist nothing).
func (h *hostile) writes() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.requests {
		if strings.HasPrefix(r, "GET ") || (strings.HasPrefix(r, "POST ") && strings.HasSuffix(r, "reviews")) {
			continue
		}
		out = append(out, r)
	}
	return out
}

func (h *hostile) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.requests)
}

func (h *hostile) kubeconfig() string {
	return h.kubeconfigFor("{token: " + bearerToken + "}")
}

// kubeconfigFor is the kubeconfig of the server with the given user.
func (h *hostile) kubeconfigFor(user string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: staging-cluster
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: ci
  user: %s
contexts:
- name: ci@staging
  context: {cluster: staging-cluster, user: ci}
current-context: ci@staging
`, h.URL, user)
}

// execUser is a kubeconfig user whose token comes from an exec plugin:
// the token is in no file the executor reads, only in what it sends.
func execUser(t *testing.T) string {
	t.Helper()
	cred := filepath.Join(t.TempDir(), "credential.json")
	body := `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"` + bearerToken + `"}}`
	if err := os.WriteFile(cred, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`{exec: {apiVersion: client.authentication.k8s.io/v1, command: cat, args: [%q], interactiveMode: Never}}`, cred)
}

// outputs runs an action and returns everything it wrote: stdout, stderr
// (the log), the report, the metrics and the error main would print.
func outputs(t *testing.T, action Action, env map[string]string) (map[string]string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := execute(context.Background(), options(t, action), lookup(env), &stdout, &stderr)
	report, rerr := os.ReadFile(filepath.Join(env["REPORT_DIR"], "deployctl-report.json"))
	metrics, merr := os.ReadFile(filepath.Join(env["REPORT_DIR"], "deployctl-metrics.prom"))
	if rerr != nil || merr != nil {
		t.Fatalf("report or metrics not written: %v %v", rerr, merr)
	}
	errText := ""
	if err != nil {
		errText = err.Error()
	}
	return map[string]string{"stdout": stdout.String(), "stderr": stderr.String(), "report": string(report),
		"metrics": string(metrics), "error": errText}, err
}

// noneHolds fails for every output holding one of the values.
func noneHolds(t *testing.T, outs map[string]string, values ...string) {
	t.Helper()
	for what, text := range outs {
		for _, v := range values {
			if strings.Contains(text, v) {
				t.Errorf("%s holds %q:\n%s", what, v, text)
			}
		}
	}
}

// Issue 11, secrets in output: an API server echoing the request's
// credentials in its error bodies (as plain text and as a Status message)
// gets them into no output, at any log level or format, whichever way the
// kubeconfig came in; the echo does reach the outputs, masked.
func TestHostileServerEchoesNoCredential(t *testing.T) {
	for _, tc := range []struct {
		name      string
		versionOK bool
		format    string
		data      bool // KUBECONFIG_DATA rather than KUBECONFIG_PATH
		exec      bool // the token from an exec plugin
	}{
		{"plain 500 on /version, text log, path", false, "text", false, false},
		{"plain 500 on /version, json log, data", false, "json", true, false},
		{"Status 500 on the credentials check, text log, data", true, "text", true, false},
		{"Status 500 on the credentials check, json log, path", true, "json", false, false},
		{"Status 500 on the credentials check, exec plugin token", true, "text", false, true},
		{"plain 500 on /version, exec plugin token", false, "json", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newHostile(t, tc.versionOK)
			env := baseEnv(t)
			env["LOG_LEVEL"], env["LOG_FORMAT"] = "debug", tc.format
			kc := srv.kubeconfig()
			if tc.exec {
				kc = srv.kubeconfigFor(execUser(t))
			}
			if tc.data {
				delete(env, "KUBECONFIG_PATH")
				env["KUBECONFIG_DATA"] = base64.StdEncoding.EncodeToString([]byte(kc))
			} else {
				env["KUBECONFIG_PATH"] = filepath.Join(t.TempDir(), "kubeconfig")
				if err := os.WriteFile(env["KUBECONFIG_PATH"], []byte(kc), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(env["SECRETS_DIR"], SecretArgoCDToken), []byte(argoToken+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			outs, err := outputs(t, ActionDeploy, env)
			if exitcode.Of(err) != exitcode.Failure {
				t.Fatalf("exit %d, want 1: %v", exitcode.Of(err), err)
			}
			if srv.auth == 0 {
				t.Fatalf("the server never saw the token: the test proves nothing\n%v\n%s", srv.requests, outs["stdout"])
			}
			noneHolds(t, outs, bearerToken, argoToken, base64.StdEncoding.EncodeToString([]byte(bearerToken)))
			if !strings.Contains(outs["stderr"], "request authorized by Bearer REDACTED") {
				t.Errorf("the API server's warning is not in the log, masked:\n%s", outs["stderr"])
			}
			for _, what := range []string{"stdout", "stderr", "report"} {
				if !strings.Contains(outs[what], "REDACTED") {
					t.Errorf("%s does not show the masked echo: the server's answer did not reach it\n%s", what, outs[what])
				}
			}
			if w := srv.writes(); len(w) > 0 {
				t.Errorf("preflight failed, yet the cluster was written to: %v", w)
			}
		})
	}
}

// Issue 11, secrets in output: a password in gitRepository is refused
// (exit 3, the cluster not contacted), and shown nowhere, the report's
// copy of environment.yaml included.
func TestGitRepositoryPasswordRefusedAndMasked(t *testing.T) {
	srv := newHostile(t, true)
	env := baseEnv(t)
	env["LOG_LEVEL"] = "debug"
	env["KUBECONFIG_PATH"] = filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(env["KUBECONFIG_PATH"], []byte(srv.kubeconfig()), 0o600)
	const pass = "ghp_repoPassw0rdXYZ"
	env["CONFIG_DIR"] = configDir(t, "name: staging\ndomain: staging.example.com\ngitRepository: https://bob:"+pass+
		"@git.example.com/platform.git\ngitRevision: main\n", "")
	outs, err := outputs(t, ActionDeploy, env)
	wantAll(t, problemsOf(t, errorsOf(t, env)),
		`gitRepository "https://REDACTED@git.example.com/platform.git": holds a password`)
	if exitcode.Of(err) != exitcode.Invalid {
		t.Fatalf("exit %d, want 3", exitcode.Of(err))
	}
	noneHolds(t, outs, pass, "bob:")
	if !strings.Contains(outs["report"], `"gitRepository": "https://REDACTED@git.example.com/platform.git"`) {
		t.Errorf("the report's environment file:\n%s", outs["report"])
	}
	if n := srv.count(); n != 0 {
		t.Errorf("invalid configuration, yet the cluster was contacted %d times", n)
	}
}

// Issue 11, teardown: the missing confirmation is among the problems
// listed with every other, whether the spec loads or not, and nothing is
// asked of the cluster.
func TestTeardownConfirmationListedWithEveryProblem(t *testing.T) {
	srv := newHostile(t, true)
	env := baseEnv(t)
	env["KUBECONFIG_PATH"] = filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(env["KUBECONFIG_PATH"], []byte(srv.kubeconfig()), 0o600)
	env["LOG_LEVEL"], env["PV_POLICY"] = "loud", "shred"

	_, err := load(t, ActionTeardown, env)
	wantAll(t, problemsOf(t, err), `LOG_LEVEL / --log-level: "loud"`, `PV_POLICY / --pv-policy: "shred"`,
		"CONFIRM / --confirm: required for teardown: set it to the platform's name (minimal)")

	// A spec that does not load: the confirmation is still asked for.
	env["CONFIG_DIR"] = configDir(t, "name: staging\ndomain: staging.example.com\ngitRepository: https://git.example.com/p.git\ngitRevision: main\n",
		"apiVersion: deployctl.dev/v1alpha1\nkind: Platform\nmetadata: {name: broken}\nspec: {stacks: 3}\n")
	_, err = load(t, ActionTeardown, env)
	ps := problemsOf(t, err)
	found := 0
	for _, p := range ps {
		if strings.HasPrefix(p, "CONFIRM / --confirm: required for teardown: set it to the platform's name (metadata.name of ") {
			found++
		}
	}
	if found != 1 {
		t.Errorf("the missing confirmation is not listed once among %q", ps)
	}

	outs, err := outputs(t, ActionTeardown, env)
	if exitcode.Of(err) != exitcode.Invalid || !strings.Contains(outs["stdout"], "CONFIRM / --confirm: required for teardown") {
		t.Errorf("exit %d; stdout:\n%s", exitcode.Of(err), outs["stdout"])
	}
	if n := srv.count(); n != 0 {
		t.Errorf("invalid configuration, yet the cluster was contacted %d times", n)
	}
}

// sized makes a file of n bytes (sparse: nothing is written).
func sized(t *testing.T, path string, n int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(n); err != nil {
		t.Fatal(err)
	}
}

// Issue 11, bounds: every input over its limit is refused, all in one
// pass, naming the file and the limit: dag.yaml and environment.yaml
// (16 MiB), the secrets' files and KUBECONFIG_PATH (1 MiB), a device
// behind a secret's name, and KUBECONFIG_DATA decoding to over 1 MiB.
func TestInputsOverTheirLimits(t *testing.T) {
	srv := newHostile(t, true)
	env := baseEnv(t)
	dir := t.TempDir()
	env["CONFIG_DIR"] = dir
	sized(t, filepath.Join(dir, SpecFileName), readlimit.Spec+1)
	sized(t, filepath.Join(dir, EnvironmentFileName), readlimit.Spec+1)
	sized(t, filepath.Join(env["SECRETS_DIR"], SecretArgoCDToken), readlimit.Secret+1)
	if err := os.Symlink("/dev/zero", filepath.Join(env["SECRETS_DIR"], SecretArgoCDCA)); err != nil {
		t.Fatal(err)
	}
	env["KUBECONFIG_PATH"] = filepath.Join(dir, "kubeconfig")
	sized(t, env["KUBECONFIG_PATH"], readlimit.Secret+1)
	_, err := load(t, ActionTeardown, env)
	wantAll(t, problemsOf(t, err),
		filepath.Join(dir, SpecFileName)+": larger than the 16 MiB limit",
		filepath.Join(dir, EnvironmentFileName)+": larger than the 16 MiB limit",
		filepath.Join(env["SECRETS_DIR"], SecretArgoCDToken)+": larger than the 1 MiB limit",
		filepath.Join(env["SECRETS_DIR"], SecretArgoCDCA)+": not a regular file (a device)",
		"KUBECONFIG_PATH / --kubeconfig: "+env["KUBECONFIG_PATH"]+": larger than the 1 MiB limit",
		"CONFIRM / --confirm: required for teardown",
	)

	delete(env, "KUBECONFIG_PATH")
	env["CONFIG_DIR"] = "testdata/config"
	env["SECRETS_DIR"] = t.TempDir()
	big := strings.Repeat("QUJD", int(readlimit.Secret/3)+1) // "ABC"…, 1 MiB + 2 bytes decoded
	env["KUBECONFIG_DATA"] = big[:76] + "\n" + big[76:]
	outs, err := outputs(t, ActionDeploy, env)
	wantAll(t, problemsOf(t, errorsOf(t, env)), "KUBECONFIG_DATA: the decoded kubeconfig is larger than the 1 MiB limit")
	if exitcode.Of(err) != exitcode.Invalid {
		t.Errorf("exit %d, want 3", exitcode.Of(err))
	}
	if strings.Contains(outs["stderr"]+outs["report"], big[:64]) {
		t.Error("the oversized KUBECONFIG_DATA is echoed")
	}
	// Exactly at the limit is not refused for its size.
	env["KUBECONFIG_DATA"] = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("#"), int(readlimit.Secret)))
	_, err = load(t, ActionDeploy, env)
	for _, p := range problemsOf(t, err) {
		if strings.Contains(p, "limit") {
			t.Errorf("a kubeconfig of exactly 1 MiB is refused: %s", p)
		}
	}
	if n := srv.count(); n != 0 {
		t.Errorf("the cluster was contacted %d times", n)
	}
}

// errorsOf loads a deploy's configuration again, for its problem list.
func errorsOf(t *testing.T, env map[string]string) error {
	t.Helper()
	_, err := load(t, ActionDeploy, env)
	return err
}

// Issue 11, environment.yaml: duplicate keys (at the top and nested) and
// unknown fields are each reported with their line, and nothing else: the
// fields of a mapping with a duplicate key are still read.
func TestEnvironmentFileDuplicateAndUnknownKeys(t *testing.T) {
	env := baseEnv(t)
	env["CONFIG_DIR"] = configDir(t, `name: staging
domain: staging.example.com
name: production
gitRepository: https://git.example.com/platform.git
gitRevision: main
timeouts:
  sync: 5m
  colour: red
  sync: 6m
retries: {maxAttempts: 3, maxAttempts: 4, backof: 1s}
extra: 1
`, "")
	_, err := load(t, ActionDeploy, env)
	path := filepath.Join(env["CONFIG_DIR"], EnvironmentFileName)
	wantAll(t, problemsOf(t, err),
		path+`: line 3: duplicate key "name" (first at line 1)`,
		path+`: line 8: unknown field "colour"`,
		path+`: line 9: duplicate key "sync" (first at line 7)`,
		path+`: line 10: duplicate key "maxAttempts" (first at line 10)`,
		path+`: line 10: unknown field "backof"`,
		path+`: line 11: unknown field "extra"`,
	)
	for body, want := range map[string]string{
		"~\n":               ": empty file",
		"- name: staging\n": ": line 1: want a mapping of fields",
	} {
		env["CONFIG_DIR"] = configDir(t, body, "")
		_, err := load(t, ActionDeploy, env)
		wantAll(t, problemsOf(t, err), filepath.Join(env["CONFIG_DIR"], EnvironmentFileName)+want)
	}
	env["CONFIG_DIR"] = filepath.Dir(path)
	c, _ := load(t, ActionDeploy, env)
	if c.Env == nil || c.Env.Name != "staging" || c.Env.Timeouts.Sync.String() != "5m0s" || c.Env.Retries.MaxAttempts != 3 {
		t.Errorf("the first of each duplicate is what is read: %+v", c.Env)
	}
}

// Issue 11, values: each value that reaches a namespace, a name, a URL or
// a log line is checked against that system's rule, all in one pass, even
// when the spec does not load (the scope's form is checked without it).
func TestEnvironmentValuesChecked(t *testing.T) {
	env := baseEnv(t)
	env["CONFIG_DIR"] = configDir(t, `name: staging
domain: "not a domain"
gitRepository: "ftp://git.example.com/platform.git"
gitRevision: "--upload-pack=touch /tmp/x"
clusterName: "staging\u0007cluster"
argocdNamespace: Argo_CD
workflowsNamespace: `+strings.Repeat("w", 64)+`
`, "apiVersion: deployctl.dev/v1alpha1\nkind: Platform\nmetadata: {name: broken}\nspec: {stacks: 3}\n")
	env["TARGET_SCOPE"] = "app:Bad_Name"
	env["TRACE_ID"] = "4bf92f3577b34da6\nlevel=ERROR msg=forged"
	env["SPAN_ID"] = "00f067aa0ba902b7"
	_, err := load(t, ActionDeploy, env)
	ps := problemsOf(t, err)
	path := filepath.Join(env["CONFIG_DIR"], EnvironmentFileName)
	for _, want := range []string{
		path + `: domain "not a domain": a lowercase RFC 1123 subdomain`,
		path + `: gitRepository "ftp://git.example.com/platform.git": scheme "ftp": want https, http, ssh, git or file`,
		path + `: gitRevision "--upload-pack=touch /tmp/x": want a branch, tag or commit`,
		path + `: clusterName "staging\acluster": want the kubeconfig's cluster name`,
		path + `: argocdNamespace "Argo_CD": a lowercase RFC 1123 label`,
		path + `: workflowsNamespace "` + strings.Repeat("w", 64) + `": must be no more than 63 characters`,
		`TARGET_SCOPE / --scope: "app:Bad_Name": the name a lowercase RFC 1123 label`,
		`TRACE_ID / --trace-id: "4bf92f3577b34da6\nlevel=ERROR msg=forged": want 1-128 letters`,
	} {
		n := 0
		for _, p := range ps {
			if strings.HasPrefix(p, want) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d problems start with %q; problems:\n%s", n, want, strings.Join(ps, "\n"))
		}
	}
	for _, p := range ps {
		if strings.Contains(p, "invalid scope") {
			t.Errorf("the malformed scope is reported twice: %s", p)
		}
	}

	// The forms that are fine.
	for _, repo := range []string{"https://git.example.com/p.git", "ssh://git@git.example.com:2222/p.git", "git@github.com:org/p.git", "file:///srv/git/p.git"} {
		if msg := checkGitURL(repo); msg != "" {
			t.Errorf("%s: %s", repo, msg)
		}
	}
	for _, scope := range []string{"", "platform", "stack:base", "app:web-1"} {
		if msg := checkScope(scope); msg != "" {
			t.Errorf("%s: %s", scope, msg)
		}
	}
}
