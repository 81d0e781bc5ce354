package importcmd

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/internal/fssnap"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/importer"
	"github.com/deployctl/deployctl/pkg/importer/appdump"
	"github.com/deployctl/deployctl/pkg/resdeps"
)

func run(args ...string) (string, string, error) {
	return runWith(nil, args...)
}

func runWith(stdin []byte, args ...string) (string, string, error) {
	cmd := NewCommand()
	cmd.SetIn(bytes.NewReader(stdin))
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

const testdata = "../../../importer/testdata/"

func TestImportWritesAValidSpec(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rfc-platform.yaml")
	_, stderr, err := run(testdata+"rfc", "-o", file, "--image", "example.com/deploystep:v1")
	if err != nil {
		t.Fatal(err, stderr)
	}
	d, err := dag.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if d.Platform.Metadata.Name != "rfc-platform" || d.Platform.Spec.Workflow.Image != "example.com/deploystep:v1" || len(d.Apps()) != 41 {
		t.Errorf("%s, %s, %d apps", d.Platform.Metadata.Name, d.Platform.Spec.Workflow.Image, len(d.Apps()))
	}
	for _, want := range []string{
		// one stack per wave of each parent; backstage keeps its namespace
		// team-portal (applicationNamespace): nothing lost
		"imported 41 apps in 23 stacks; 24 dependencies inferred from sync waves (24 between stacks); no field lost\n",
		"note: app-of-apps parents left out",
		"wrote " + file,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "warning:") {
		t.Errorf("a difference reported:\n%s", stderr)
	}
	if strings.Contains(stderr, "placeholder") {
		t.Error("--image given, still a placeholder note")
	}
}

func TestImportStrictWritesNothing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.yaml")
	_, _, err := run(testdata+"lossy", "--strict", "-o", file)
	if err == nil || exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), "--strict") {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("%s written: %v", file, err)
	}
}

func TestImportToStdout(t *testing.T) {
	out, _, err := run(testdata+"folders", "--stack-from", "folder", "--name", "small")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "metadata: {name: small}") || !strings.Contains(out, "- database # inferred from sync-wave 1 → 2") {
		t.Errorf("stdout:\n%s", out)
	}
}

func TestImportInvalidArguments(t *testing.T) {
	for _, args := range [][]string{
		{testdata + "rfc", "--stack-from", "owner"},
		{testdata + "rfc", "--name", "Not_A_Label"},
		{testdata + "missing"},
		{testdata + "folders/apps/README.md"}, // no Application in it
	} {
		if _, _, err := run(args...); exitcode.Of(err) != exitcode.Invalid {
			t.Errorf("%v: err %v, want exit 3", args, err)
		}
	}
}

// kubectl get applications -A -o yaml | deployctl import -
func TestImportFromStdin(t *testing.T) {
	dump, err := os.ReadFile(testdata + "rfc/components.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runWith(dump, "-", testdata+"rfc/app-of-apps.yaml", "--name", "rfc")
	if err != nil {
		t.Fatal(err, stderr)
	}
	if !strings.Contains(stderr, "imported 41 apps in 23 stacks") || !strings.Contains(out, "- name: temporal-ui") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// -o replaces only a spec an earlier import wrote: never a file of the
// user's, a link, a folder or a device; nothing is touched.
func TestImportRefusesOutputsItDidNotWrite(t *testing.T) {
	root := t.TempDir()
	mine := filepath.Join(root, "mine.yaml")
	if err := os.WriteFile(mine, []byte("# my hand-written spec\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link.yaml")
	if err := os.Symlink(mine, link); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		mine:                                mine + `: exists and was not written by this command (it does not start with "# Imported by ` + "`deployctl import`" + `"); it is never replaced: choose another path, or remove the file yourself`,
		link:                                link + ": is a symbolic link, not a file this command wrote; it is never replaced: choose another path",
		root:                                root + ": is a folder, not a file this command wrote; it is never replaced: choose another path",
		filepath.Join(root, "no", "p.yaml"): filepath.Join(root, "no", "p.yaml") + ": its folder " + filepath.Join(root, "no") + " does not exist; create it first, or choose another path",
	}
	if dev := filepath.Join(root, "null"); fssnap.Device(t, dev) {
		cases[dev] = dev + ": is a device, not a file this command wrote; it is never replaced: choose another path"
	}
	before := fssnap.Take(t, root)
	for out, want := range cases {
		want = "-o " + want + " (-o - writes to standard output)"
		_, _, err := run(testdata+"folders", "--stack-from", "folder", "--name", "small", "-o", out)
		if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Invalid {
			t.Errorf("exit %d:\n got %v\nwant %s", exitcode.Of(err), err, want)
		}
	}
	fssnap.Same(t, before, fssnap.Take(t, root))
}

func TestImportReplacesItsOwnSpec(t *testing.T) {
	file := filepath.Join(t.TempDir(), "small.yaml")
	for range 2 {
		if _, stderr, err := run(testdata+"folders", "--stack-from", "folder", "-o", file); err != nil {
			t.Fatal(err, stderr)
		}
	}
	if b, _ := os.ReadFile(file); !strings.HasPrefix(string(b), importer.Mark) {
		t.Errorf("the spec does not start with the mark:\n%.200s", b)
	}
}

// Standard input is bounded like a file, and its problems are reported
// together with those of the files: one pass, exit 3, nothing written.
func TestImportStdinBoundedAndEveryProblem(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("kind: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.yaml")
	_, _, err := runWith(bytes.Repeat([]byte("\n"), 64<<20+1), bad, "-", "-o", out)
	want := "2 problems in the input (nothing was written):\n" +
		"  " + bad + ":1: YAML: did not find expected node content\n" +
		"  (stdin): larger than the 64 MiB limit"
	if exitcode.Of(err) != exitcode.Invalid || err.Error() != want {
		t.Errorf("got %v (exit %d), want\n%s", err, exitcode.Of(err), want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s written: %v", out, err)
	}
}

// Label stacks whose sync waves imply more dependencies than
// importer.MaxWaveEdges (10,000 apps, 50 teams of five waves: 320,000) are
// refused with exit 3 and nothing written, naming the count, the limit and
// --stack-from parent.
func TestImportRefusesTooManyWaveEdges(t *testing.T) {
	root := t.TempDir()
	input := filepath.Join(root, "dump.yaml")
	if err := os.WriteFile(input, appdump.List(10000, 5), 0o644); err != nil {
		t.Fatal(err)
	}
	before := fssnap.Take(t, root)
	_, stderr, err := run(input, "--stack-from", "label=team", "-o", filepath.Join(root, "p.yaml"))
	if err == nil || exitcode.Of(err) != exitcode.Invalid {
		t.Fatalf("exit %d: %v", exitcode.Of(err), err)
	}
	for _, want := range []string{"imply 320,000 dependencies", "more than the limit of 95,325", "nothing was written", "Use --stack-from parent"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(stderr, "wrote") {
		t.Errorf("stderr: %s", stderr)
	}
	fssnap.Same(t, before, fssnap.Take(t, root))
}

func TestImportManifests(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rfc.yaml")
	_, stderr, err := run(testdata+"rfc", "-o", file, "--manifests", testdata+"rfc-manifests", "--prune-unexplained")
	if err != nil {
		t.Fatal(err, stderr)
	}
	want := "imported 41 apps in 23 stacks; 41 dependencies from the resources (31 added, the others ordered already), " +
		"7 sync-wave dependencies kept (7 between stacks): 7 a resource needs, 0 not checked; 17 nothing needs, dropped; no field lost\n"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if _, err := dag.Load(file); err != nil {
		t.Fatal(err)
	}
}

// Bad flags and a bad inventory: exit 3, every problem at once, nothing written.
func TestImportManifestsInvalid(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "inv")
	if err := os.MkdirAll(filepath.Join(bad, "metallb"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "metallb", "x.yaml"), []byte("kind: ConfigMap\nmetadata: {name: c}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "out.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{testdata + "rfc", "--prune-unexplained", "-o", file}, "--prune-unexplained goes with --manifests"},
		{[]string{testdata + "rfc", "--manifests", bad, "--stack-from", "nope", "-o", file}, "metallb/x.yaml:1: no apiVersion: not a Kubernetes object"},
		{[]string{testdata + "rfc", "--manifests", filepath.Join(dir, "missing"), "-o", file}, "--manifests " + filepath.Join(dir, "missing")},
	} {
		_, _, err := run(c.args...)
		if exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v", c.args, err)
		}
		if c.args[3] == "--stack-from" && !strings.Contains(err.Error(), "--stack-from") {
			t.Errorf("not every problem at once: %v", err)
		}
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Error("something was written")
	}
}

// fakeArgoCD serves each Application's managed resources from a folder of
// rendered manifests (DIR/<app>/), as Argo CD's API sends them: every
// object a JSON string in targetState.
func fakeArgoCD(t *testing.T, dir, token string, fail map[string]bool) *httptest.Server {
	t.Helper()
	apps, err := resdeps.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]resdeps.App{}
	for _, a := range apps {
		byName[a.Name] = a
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, "/api/v1/applications/")
		name, ok2 := strings.CutSuffix(name, "/managed-resources")
		if !ok || !ok2 || r.Method != http.MethodGet || r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, `{"message":"no"}`, http.StatusUnauthorized)
			return
		}
		if fail[name] {
			http.Error(w, `{"code":13,"message":"repository not accessible"}`, http.StatusInternalServerError)
			return
		}
		var items []map[string]any
		for _, o := range byName[name].Objects {
			state, _ := json.Marshal(o.Obj)
			items = append(items, map[string]any{"kind": o.Kind(), "name": o.Name(), "targetState": string(state)})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"items": items})
	}))
}

// --live reads the same inventory through the Argo CD API: the same spec
// as --manifests; a failed read exits 1 naming every app that failed.
func TestImportLive(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := fakeArgoCD(t, testdata+"rfc-manifests", "s3cret-token", nil)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	live, stderr, err := run(testdata+"rfc", "--live", "--server", host, "--plaintext", "--token-file", tok, "--prune-unexplained")
	if err != nil {
		t.Fatal(err, stderr)
	}
	files, _, err := run(testdata+"rfc", "--manifests", testdata+"rfc-manifests", "--prune-unexplained")
	if err != nil {
		t.Fatal(err)
	}
	body := func(s string) string { return s[strings.Index(s, "\napiVersion:"):] }
	if body(live) != body(files) {
		t.Error("--live and --manifests differ")
	}
	if strings.Contains(stderr+live, "s3cret-token") {
		t.Error("the token is in the output")
	}

	bad := fakeArgoCD(t, testdata+"rfc-manifests", "s3cret-token", map[string]bool{"grafana": true, "loki": true})
	defer bad.Close()
	_, _, err = run(testdata+"rfc", "--live", "--server", strings.TrimPrefix(bad.URL, "http://"), "--plaintext", "--token-file", tok)
	if exitcode.Of(err) != exitcode.Failure || !strings.Contains(err.Error(), "managed resources of Application argocd/grafana: HTTP 500: repository not accessible") ||
		!strings.Contains(err.Error(), "argocd/loki") {
		t.Errorf("err = %v", err)
	}
	_, _, err = run(testdata+"rfc", "--live", "--manifests", testdata+"rfc-manifests")
	if exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), "give one") {
		t.Errorf("err = %v", err)
	}
	t.Setenv("ARGOCD_SERVER", "")
	t.Setenv("ARGOCD_TOKEN_FILE", "")
	_, _, err = run(testdata+"rfc", "--live")
	if exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), "server is required") || !strings.Contains(err.Error(), "token file is required") {
		t.Errorf("err = %v", err)
	}
}
