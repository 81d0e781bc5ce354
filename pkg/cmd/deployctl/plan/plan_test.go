package plan

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/plan"
)

// spec is testdata/cw.yaml (x → y, and z on its own), for the tests that
// write a changed copy of it.
var spec = func() string {
	data, err := os.ReadFile("testdata/cw.yaml")
	if err != nil {
		panic(err)
	}
	return string(data)
}()

// A deploy report: x took 60 s, y 30 s, z 300 s; w is not in the spec.
const report = `{"kind": "deployctl.dev/v1alpha1/ExecutorReport", "action": "deploy", "status": "Succeeded",
 "components": [
  {"name": "x", "status": "Succeeded", "durationSeconds": 60},
  {"name": "y", "status": "Kept", "durationSeconds": 30},
  {"name": "z", "status": "Succeeded", "durationSeconds": 300},
  {"name": "w", "status": "Failed", "durationSeconds": 9}]}`

func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := NewCommand()
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

func files(t *testing.T) (specFile, wavesFile, reportFile string) {
	dir := t.TempDir()
	specFile, wavesFile, reportFile = "testdata/cw.yaml", filepath.Join(dir, "w.yaml"), filepath.Join(dir, "r.json")
	for f, data := range map[string]string{wavesFile: "x: 0\nz: {wave: 0, path: root@0}\ny: {wave: 1, path: root@0}\nghost: 3\n", reportFile: report} {
		if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return
}

func TestCompareWavesWithReport(t *testing.T) {
	specFile, wavesFile, reportFile := files(t)
	out, stderr, err := run(t, specFile, "--compare-waves", "--waves", wavesFile, "--durations", reportFile, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var c plan.WaveComparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err, out)
	}
	// Waves: x (wave 0) at the top, then root (wave 0) holding z (wave 0)
	// and y (wave 1): one top wave, max(x 60, root 300 + 30) = 330 s.
	// DAG: x → y 90 s, z 300 s: 300 s. Ratio 1.1.
	if c.WaveMakespan != 330 || c.DAGMakespan != 300 || c.Ratio != 1.1 || c.MeasuredApps != 3 || c.Model != "app-of-apps" {
		t.Errorf("%+v", c)
	}
	if !strings.Contains(stderr, `"ghost" is not an app`) {
		t.Errorf("stderr: %s", stderr)
	}
}

func TestCompareWavesErrors(t *testing.T) {
	specFile, wavesFile, reportFile := files(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{specFile, "--compare-waves"}, "no app has a sync wave"},
		{[]string{specFile, "--waves", wavesFile}, "go with --compare-waves"},
		{[]string{specFile, "--compare-waves", "--waves", reportFile}, "want a map of app name to a wave"},
		{[]string{specFile, "--compare-waves", "--waves", wavesFile, "--durations", wavesFile}, "not an executor report"},
		{[]string{specFile, "--compare-waves", "--waves", badWaves(t, "x: {wave: 1, parent: p}")}, `unknown field "parent"`},
		{[]string{specFile, "--compare-waves", "--waves", badWaves(t, "x: {wave: 1, path: a@b}")}, "not an integer"},
		{[]string{specFile, "--compare-waves", "--waves", wavesFile, "-o", "dot"}, "text or json"},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitcode.Of(err) != exitcode.Invalid {
			t.Errorf("%v: err %v, want %q (exit 3)", tc.args[1:], err, tc.want)
		}
	}
}

func badWaves(t *testing.T, content string) string {
	f := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// Absurd durations would make a negative makespan: refused, each with its
// line and field, in one pass.
func TestCompareWavesRefusesAbsurdDurations(t *testing.T) {
	specFile, wavesFile, _ := files(t)
	absurd := badWaves(t, `{"kind": "deployctl.dev/v1alpha1/ExecutorReport", "action": "deploy",
 "components": [
  {"name": "x", "status": "Succeeded", "durationSeconds": 1e308},
  {"name": "y", "status": "Succeeded", "durationSeconds": 30},
  {"name": "z", "status": "Succeeded",
   "durationSeconds": -5}]}`)
	out, _, err := run(t, specFile, "--compare-waves", "--waves", wavesFile, "--durations", absurd)
	want := absurd + `:3: components[0].durationSeconds (app "x"): 1e+308 is not a measured duration: want 0 to 86400 seconds` + "\n" +
		absurd + `:6: components[2].durationSeconds (app "z"): -5 is not a measured duration: want 0 to 86400 seconds`
	if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Invalid || out != "" {
		t.Errorf("exit %d, out %q, err:\n%v\nwant:\n%s", exitcode.Of(err), out, err, want)
	}
	// JSON has no NaN or infinity: not a report at all.
	for _, v := range []string{"NaN", "1e999"} {
		nan := badWaves(t, `{"kind": "deployctl.dev/v1alpha1/ExecutorReport", "action": "deploy", "components": [{"name": "x", "durationSeconds": `+v+`}]}`)
		if _, _, err := run(t, specFile, "--compare-waves", "--waves", wavesFile, "--durations", nan); exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), nan+": not an executor report") {
			t.Errorf("%s: exit %d, err %v", v, exitcode.Of(err), err)
		}
	}
}

// The files plan reads itself are bounded like a spec.
func TestCompareWavesRefusesOversizedFiles(t *testing.T) {
	specFile, wavesFile, reportFile := files(t)
	big := filepath.Join(t.TempDir(), "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(16<<20 + 1); err != nil { // sparse: no 16 MiB written
		t.Fatal(err)
	}
	f.Close()
	for _, args := range [][]string{{"--waves", big, "--durations", reportFile}, {"--waves", wavesFile, "--durations", big}} {
		_, _, err := run(t, append([]string{specFile, "--compare-waves"}, args...)...)
		if want := big + ": larger than the 16 MiB limit"; err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Invalid {
			t.Errorf("%v: exit %d, err %v, want %s", args, exitcode.Of(err), err, want)
		}
	}
}

// --explain-edges: a missing dependency exits 3 after the report; flags that
// do not go together are refused, all at once.
func TestExplainEdges(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(dir, "inv")
	for name, text := range map[string]string{
		"x/crd.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ws.example.com}\nspec: {group: example.com, scope: Namespaced, names: {kind: W, plural: ws}}\n",
		"z/w.yaml":   "apiVersion: example.com/v1\nkind: W\nmetadata: {name: w, namespace: n}\n",
		"y/c.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: n}\n",
	} {
		p := filepath.Join(inv, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err := run(t, file, "--explain-edges", "--manifests", inv)
	if exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), "1 missing dependency") {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"error: missing dependency z → x: W n/w at " + inv + "/z/w.yaml:1 needs CRD ws.example.com from x;",
		"info: " + file + ":15: spec.stacks[0].apps[1].dependsOn[0]: y → x: no resource needs it"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	out, _, err = run(t, file, "--explain-edges", "--manifests", inv, "-o", "json")
	var r plan.EdgeReport
	if jerr := json.Unmarshal([]byte(out), &r); jerr != nil || len(r.Missing) != 1 || exitcode.Of(err) != exitcode.Invalid {
		t.Errorf("json: %v %v %s", jerr, err, out)
	}
	// With the dependency declared: exit 0.
	fixed := strings.Replace(spec, "    - name: z\n", "    - name: z\n      dependsOn: [x]\n", 1)
	if err := os.WriteFile(file, []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, file, "--explain-edges", "--manifests", inv); err != nil {
		t.Errorf("fixed: %v", err)
	}
	// --compare-waves against the DAG of the resources.
	waves := filepath.Join(dir, "waves.yaml")
	if err := os.WriteFile(waves, []byte("x: 0\ny: 1\nz: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, file, "--compare-waves", "--waves", waves, "--manifests", inv)
	if err != nil || !strings.Contains(out, "DAG: dependencies from the resources (--manifests "+inv+")") ||
		!strings.Contains(out, "critical path: x 10m → z 5m") {
		t.Errorf("compare: %v\n%s", err, out)
	}

	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{file, "--explain-edges"}, []string{"--explain-edges needs --manifests DIR (the rendered manifests of the apps) or --live"}},
		{[]string{file, "--manifests", inv}, []string{"--manifests and --live go with --explain-edges or --compare-waves"}},
		{[]string{file, "--explain-edges", "--compare-waves", "--manifests", inv}, []string{"two reports"}},
		{[]string{file, "--explain-edges", "--manifests", filepath.Join(dir, "none"), "--waves", "w.yaml"},
			[]string{"--waves and --durations go with --compare-waves", "--manifests " + filepath.Join(dir, "none")}},
	} {
		_, _, err := run(t, c.args...)
		for _, w := range c.want {
			if exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v (want %q)", c.args, err, w)
			}
		}
	}
}

// --explain-edges --live: the inventory from the Argo CD API; a failed
// read exits 1, with the token nowhere in the message.
func TestExplainEdgesLive(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yaml")
	tok := filepath.Join(dir, "token")
	for f, text := range map[string]string{file: spec, tok: "live-token-123\n"} {
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"ws.example.com"},"spec":{"group":"example.com","scope":"Namespaced","names":{"kind":"W","plural":"ws"}}}`
	w := `{"apiVersion":"example.com/v1","kind":"W","metadata":{"name":"w","namespace":"n"}}`
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer live-token-123" || r.URL.Query().Get("appNamespace") != "argocd" {
			http.Error(rw, `{"message":"denied `+r.Header.Get("Authorization")+`"}`, http.StatusForbidden) // echoes the credential
			return
		}
		state := map[string]string{"/api/v1/applications/x/managed-resources": crd, "/api/v1/applications/z/managed-resources": w}[r.URL.Path]
		items := []map[string]string{}
		if state != "" {
			items = append(items, map[string]string{"targetState": state})
		}
		_ = json.NewEncoder(rw).Encode(map[string]any{"items": items})
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	out, _, err := run(t, file, "--explain-edges", "--live", "--server", host, "--plaintext", "--token-file", tok)
	if exitcode.Of(err) != exitcode.Invalid || !strings.Contains(out, "error: missing dependency z → x: W n/w at Application argocd/z (live) needs CRD ws.example.com from x;") {
		t.Errorf("%v\n%s", err, out)
	}
	if err := os.WriteFile(tok, []byte("wrong-token-456\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = run(t, file, "--explain-edges", "--live", "--server", host, "--plaintext", "--token-file", tok)
	if exitcode.Of(err) != exitcode.Failure || !strings.Contains(err.Error(), "managed resources of Application argocd/x: HTTP 403") {
		t.Errorf("err = %v", err)
	}
	if strings.Contains(err.Error(), "wrong-token-456") {
		t.Error("token in the message")
	}
}
