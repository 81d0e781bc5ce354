package importcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deployctl/deployctl/internal/fssnap"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/importer/appdump"
)

// refused runs import, which must exit 3 within a bound, write nothing,
// and say want.
func refused(t *testing.T, want string, args ...string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.yaml")
	before := fssnap.Take(t, dir)
	done := make(chan error, 1)
	go func() { _, _, err := run(append(args, "-o", out)...); done <- err }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("import %v did not finish", args)
	}
	if exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), want) {
		t.Errorf("exit %d, want 3 and %q:\n%v", exitcode.Of(err), want, err)
	}
	fssnap.Same(t, before, fssnap.Take(t, dir))
}

// Issue 22: an Application made of YAML aliases (10^10 values from 964
// bytes; 6.8 KB made a 3.9 MB spec) is refused at the alias, before
// anything expands it.
func TestImportAliasBomb(t *testing.T) {
	start := time.Now()
	refused(t, "alias-bomb/app.yaml:16: YAML: alias expansion exceeds", testdata+"alias-bomb")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}

// And in an app's manifests (--manifests: 650 KB made 686 MB).
func TestImportManifestsAliasBomb(t *testing.T) {
	refused(t, "web/configmap.yaml:12: YAML: alias expansion exceeds", testdata+"rfc", "--manifests", "../../../resdeps/testdata/alias-bomb")
}

// A named pipe named *.yaml in an import folder is refused by its type,
// at once (it hung the import).
func TestImportFolderWithNamedPipe(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "apps"), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "apps", "app.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	refused(t, fifo+": not a regular file (a named pipe)", dir)
}

// Input values the spec's rules refuse are errors at the input's file and
// line, naming the Application's field (not "a bug in the importer" at a
// line of a spec never written).
func TestImportInvalidValuesAtTheInput(t *testing.T) {
	dir := t.TempDir()
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\n  namespace: argocd\n" +
		"  labels: {tier: \"front end\"}\nspec:\n  project: default\n" +
		"  source: {repoURL: https://example.com/r.git, path: web}\n" +
		"  destination:\n    server: https://kubernetes.default.svc\n    namespace: Web_NS\n"
	if err := appdump.WriteFiles(dir, map[string]string{"apps/web.yaml": app}); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "apps", "web.yaml")
	refused(t, "2 problems in the input (nothing was written):\n  "+
		f+`:12: Application web: spec.destination.namespace: "Web_NS" is not a valid namespace name`, f)
	refused(t, f+`:6: Application web: metadata.labels.tier: label value "front end" is not valid`, f)
	_, _, err := run(f, "-o", "-")
	if err == nil || strings.Contains(err.Error(), "internal") || strings.Contains(err.Error(), "a bug") {
		t.Errorf("reported as the importer's bug: %v", err)
	}

	// A value the import factors out of the apps (Argo CD's namespace, a
	// shared sync policy in spec.defaults) is reported at every app that has it.
	ns := strings.Replace(strings.Replace(app, "namespace: argocd", "namespace: Argo_CD", 1), "Web_NS", "web", 1)
	retry := "  syncPolicy:\n    retry: {limit: 2, backoff: {duration: 5 minutes}}\n"
	shared := strings.Replace(strings.Replace(app, "Web_NS", "web", 1), "tier: \"front end\"", "tier: front", 1) + retry
	if err := appdump.WriteFiles(dir, map[string]string{
		"ns/web.yaml":   ns,
		"shared/a.yaml": strings.Replace(shared, "name: web", "name: a", 1),
		"shared/b.yaml": strings.Replace(shared, "name: web", "name: b", 1),
		"shared/c.yaml": strings.Replace(shared, "name: web", "name: c", 1),
	}); err != nil {
		t.Fatal(err)
	}
	refused(t, filepath.Join(dir, "ns", "web.yaml")+":5: Application web: metadata.namespace: not a DNS-1123 label", filepath.Join(dir, "ns"))
	for _, a := range []string{"a", "b", "c"} {
		refused(t, filepath.Join(dir, "shared", a+".yaml")+":14: Application "+a+": spec.syncPolicy.retry.backoff.duration:", filepath.Join(dir, "shared"))
	}
}

// An Application too large for one generated WorkflowTemplate imports
// (exit 0: the spec is the whole translation, and splitting it is an edit
// of it), and the spec's header says that generate will refuse it.
func TestImportTooLargeSaysSoInTheHeader(t *testing.T) {
	dir := t.TempDir()
	var values strings.Builder
	for i := 0; i < 11000; i++ {
		fmt.Fprintf(&values, "        key%05d: %s\n", i, strings.Repeat("v", 90))
	}
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: big, namespace: argocd}\nspec:\n  project: default\n" +
		"  source:\n    repoURL: https://example.com/r.git\n    path: web\n    helm:\n      valuesObject:\n" + values.String() +
		"  destination: {server: https://kubernetes.default.svc, namespace: web}\n"
	in := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(in, []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "spec.yaml")
	if _, stderr, err := run(in, "-o", out); err != nil {
		t.Fatal(err, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(data), "\napiVersion:")
	if !strings.Contains(header, "# Note: `deployctl generate` will refuse this spec as it is:") ||
		!strings.Contains(strings.ReplaceAll(header, "\n#  ", ""), "workflow-templates/spec-deploy-applications-1.yaml would be") {
		t.Errorf("the header does not say generate will refuse it:\n%s", header)
	}
}
