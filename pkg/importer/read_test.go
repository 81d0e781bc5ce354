package importer

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/spec"
)

func readErr(t *testing.T, paths ...string) string {
	t.Helper()
	in, err := Read(paths)
	if err == nil {
		_, err = Import(in, Options{Name: "p", StackFrom: StackFrom{Kind: "parent"}})
	}
	if err == nil {
		t.Fatalf("%v: no error", paths)
	}
	return err.Error()
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func apps(r *Result) map[string]spec.App {
	out := map[string]spec.App{}
	for _, s := range r.Platform.Spec.Stacks {
		for _, a := range s.Apps {
			out[a.Name] = a
		}
	}
	return out
}

// ai-accelerator's cluster overlay is a Kustomize tree: the overlay is
// built once, with its bases (which are not built again on their own), the
// configMapGenerator's repoURL and targetRevision replaced into the
// Application, the overlay's patch on its path applied; the two JSON patch
// files the kustomization leaves commented out are not read as
// Applications; the ApplicationSets are named.
func TestKustomizeTree(t *testing.T) {
	dir := "testdata/kustomize-ai-accelerator"
	r := importDir(t, "parent", dir)
	got := apps(r)
	if len(got) != 1 {
		t.Fatalf("apps %v", got)
	}
	a := got["cluster-config-app-of-apps"]
	want := spec.Source{
		RepoURL: "https://github.com/redhat-ai-services/ai-accelerator.git", TargetRevision: "main",
		Path: "clusters/overlays/rhoai-eus-2.25",
	}
	if a.Source == nil || !reflect.DeepEqual(*a.Source, want) {
		t.Errorf("source %+v, want %+v", a.Source, want)
	}
	if ns := r.Platform.Spec.ArgoCD.Namespace; ns != "openshift-gitops" {
		t.Errorf("argocd namespace %q", ns)
	}
	if len(r.Differences) != 0 {
		t.Errorf("differences %v", r.Differences)
	}
	out := dir + "/clusters/overlays/rhoai-eus-2.25 (kustomize build output)"
	for _, n := range []string{
		"built with Kustomize, its output read instead of its files: " + dir + "/clusters/overlays/rhoai-eus-2.25",
		"2 ApplicationSets: the Applications they generate are not in the input and are not imported; " +
			"to import them, dump them from the cluster: kubectl get applications -A -o yaml > apps.yaml, then deployctl import apps.yaml: " +
			"cluster-configs (" + out + ":22), cluster-operators (" + out + ":67)",
		"not Applications, left out: AppProject cluster-config (" + out + ":117), ConfigMap gitops-repo-config-98t8c5m467 (" + out + ":132)",
	} {
		if !hasNote(r, n) {
			t.Errorf("no note %q in\n%s", n, strings.Join(r.Notes, "\n"))
		}
	}

	// The base alone is built as it is: its placeholder path, unpatched.
	r = importDir(t, "parent", dir+"/components/argocd/apps/base")
	if p := apps(r)["cluster-config-app-of-apps"].Source.Path; p != "patch-me-see-overlays" {
		t.Errorf("base alone: path %q", p)
	}
}

func TestKustomizeRemoteBaseRefused(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"overlay/kustomization.yaml": "resources:\n- https://github.com/redhat-ai-services/ai-accelerator//components/argocd/apps/base?ref=main\n",
	})
	got := readErr(t, dir)
	want := "1 problem in the input (nothing was written):\n  " + dir + "/overlay/kustomization.yaml: remote base " +
		`"https://github.com/redhat-ai-services/ai-accelerator//components/argocd/apps/base?ref=main": ` +
		"the import fetches nothing over the network: build it first: kustomize build " + dir + "/overlay | deployctl import -"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// argocd-example-apps' app-of-apps is a Helm chart: the import says to
// render it, at the template's line, and reads the rest of the tree (a
// Kustomize folder and a Service, no Application).
func TestHelmChart(t *testing.T) {
	dir := "testdata/argocd-example-apps"
	got := readErr(t, dir)
	want := "1 problem in the input (nothing was written):\n  " + dir + "/apps/templates/applications.yaml:4: " +
		"an Argo CD Application in a Helm chart's template: render it first: helm template " + dir + "/apps | deployctl import -"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// The template itself, as a file: its first line of Helm syntax.
	got = readErr(t, dir+"/apps/templates/applications.yaml")
	want = "1 problem in the input (nothing was written):\n  " + dir + "/apps/templates/applications.yaml:1: " +
		"Helm template syntax ({{ ... }}): render it first: helm template " + dir + "/apps | deployctl import -"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A file of only an ApplicationSet names it and says where its
// Applications can be imported from.
func TestOnlyApplicationSets(t *testing.T) {
	f := "testdata/kustomize-ai-accelerator/components/argocd/apps/base/cluster-configs-applicationset.yaml"
	got := readErr(t, f)
	want := "no Argo CD Application found in the input; 1 ApplicationSet (cluster-configs (" + f + ":1)) generate their Applications " +
		"in the cluster, and those are not in the input: import them from there: kubectl get applications -A -o yaml | deployctl import -"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// Real Applications with Argo CD's sync retry, Pod Security labels on the
// managed namespace and helm.skipCrds come back exactly; the Helm values
// files beside them are named and left out.
func TestRealFieldsRoundTrip(t *testing.T) {
	r := importDir(t, "parent", "testdata/rivendell", "testdata/rzp-infrastructure/kubernetes")
	if len(r.Differences) != 0 {
		t.Errorf("differences %v", r.Differences)
	}
	writeAndLoad(t, r)
	d := r.Platform.Spec.Defaults.SyncPolicy
	// metallb, longhorn and kube-prometheus-stack share it; cert-manager
	// and cert-manager-config have their own.
	wantLabels := map[string]string{
		"pod-security.kubernetes.io/enforce": "privileged",
		"pod-security.kubernetes.io/audit":   "privileged",
		"pod-security.kubernetes.io/warn":    "privileged",
	}
	if d == nil || d.ManagedNamespaceMetadata == nil || !reflect.DeepEqual(d.ManagedNamespaceMetadata.Labels, wantLabels) {
		t.Errorf("defaults.syncPolicy %+v", d)
	}
	cm := apps(r)["cert-manager"]
	factor := int64(2)
	wantRetry := &spec.SyncRetry{Limit: 5, Backoff: &spec.SyncBackoff{Duration: "5s", Factor: &factor, MaxDuration: "3m"}}
	if cm.SyncPolicy == nil || !reflect.DeepEqual(cm.SyncPolicy.Retry, wantRetry) || cm.SyncPolicy.ManagedNamespaceMetadata != nil {
		t.Errorf("cert-manager syncPolicy %+v", cm.SyncPolicy)
	}
	if n := "not Kubernetes objects, left out: " +
		"testdata/rivendell/kubernetes/values/longhorn.yaml:1: no apiVersion and kind (Helm values or other YAML, not a Kubernetes object), " +
		"testdata/rzp-infrastructure/kubernetes/config/cert-manager/cert-manager-values.yaml:3: no apiVersion and kind (Helm values or other YAML, not a Kubernetes object), " +
		"testdata/rzp-infrastructure/kubernetes/config/metallb/metallb-values.yaml:3: no apiVersion and kind (Helm values or other YAML, not a Kubernetes object)"; !hasNote(r, n) {
		t.Errorf("no note %q in\n%s", n, strings.Join(r.Notes, "\n"))
	}
}

// Every problem of every file in one pass, each at its line in the file
// (not in its YAML document).
func TestEveryProblemAtItsLine(t *testing.T) {
	dir := t.TempDir()
	app := "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: %s, namespace: argocd}\n" +
		"spec: {project: default, source: {repoURL: r, path: p}, destination: {namespace: n}}\n"
	write(t, dir, map[string]string{
		"a.yaml": strings.ReplaceAll(app, "%s", "a") + "---\n# two\nkind: [\n",
		"b.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {{ .Values.name }}\n",
		"c.yaml": strings.ReplaceAll(app, "%s", "c") + "---\n" + strings.ReplaceAll(app, "%s", "d") + "spec: {}\n",
		"d.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: e}\nspec:\n  syncPolicy: [a]\n",
	})
	got := readErr(t, dir)
	// a.yaml:7 is "kind: [", the flow never closed.
	want := "4 problems in the input (nothing was written):\n" +
		"  " + dir + "/a.yaml:7: YAML: did not find expected node content\n" +
		"  " + dir + "/b.yaml:4: Helm template syntax ({{ ... }}): render it first: helm template CHART | deployctl import -\n" +
		"  " + dir + "/c.yaml:6: line 10: mapping key \"spec\" already defined at line 9\n" +
		"  " + dir + "/d.yaml:5: not a valid Application e: spec.syncPolicy: want v1alpha1.SyncPolicy, not a array"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// The same Application twice: kept once when both say the same; refused,
// naming both files and the fields that differ, when they do not (the
// issue's case: a copy in another folder, in another wave).
func TestDuplicates(t *testing.T) {
	orig, err := os.ReadFile("testdata/rivendell/kubernetes/apps/metallb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"networking/metallb.yaml": string(orig),
		"old/metallb.yaml":        strings.Replace(string(orig), `sync-wave: "1"`, `sync-wave: "2"`, 1),
	})
	got := readErr(t, dir)
	want := "1 problem in the input (nothing was written):\n  " + dir + "/old/metallb.yaml:1: Application argocd/metallb, read before at " +
		dir + `/networking/metallb.yaml:1, differs from it in metadata.annotations["argocd.argoproj.io/sync-wave"]: keep one of the two`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	write(t, dir, map[string]string{"old/metallb.yaml": string(orig)})
	r := importDir(t, "folder", dir)
	if n := "read twice, the same both times, kept once: argocd/metallb (" + dir + "/networking/metallb.yaml:1 and " + dir + "/old/metallb.yaml:1)"; !hasNote(r, n) {
		t.Errorf("no note %q in %v", n, r.Notes)
	}
	if len(r.Sources) != 1 {
		t.Errorf("sources %v", r.Sources)
	}
}

// Every input is bounded: a file, a folder's files together, stdin.
func TestBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "one", "big.yaml")
	write(t, dir, map[string]string{"one/big.yaml": "", "two/a.yaml": "", "two/b.yaml": ""})
	if err := os.Truncate(big, 64<<20+1); err != nil {
		t.Fatal(err)
	}
	// Two files under the bound each, over it together (of blank lines,
	// which parse to nothing).
	for _, f := range []string{"two/a.yaml", "two/b.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(strings.Repeat("\n", 40<<20)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Read([]string{big, filepath.Join(dir, "two")})
	want := "2 problems in the input (nothing was written):\n" +
		"  " + big + ": larger than the 64 MiB limit\n" +
		"  " + dir + "/two: larger than the 64 MiB limit (all its files together)"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}

	in := &Input{}
	err = in.ReadStdin(io.LimitReader(zeros{}, 64<<20+1), "(stdin)")
	if want := "1 problem in the input (nothing was written):\n  (stdin): larger than the 64 MiB limit"; err == nil || err.Error() != want {
		t.Errorf("stdin: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestKustomizeRootsSorted(t *testing.T) {
	in := &Input{}
	roots := in.kustomizeRoots(map[string]bool{
		"testdata/kustomize-ai-accelerator/components/argocd/apps/base":                    true,
		"testdata/kustomize-ai-accelerator/components/argocd/apps/overlays/rhoai-eus-2.25": true,
		"testdata/kustomize-ai-accelerator/clusters/base":                                  true,
	})
	sort.Strings(roots)
	want := []string{"testdata/kustomize-ai-accelerator/clusters/base", "testdata/kustomize-ai-accelerator/components/argocd/apps/overlays/rhoai-eus-2.25"}
	if !reflect.DeepEqual(roots, want) || len(in.Problems) != 0 {
		t.Errorf("roots %v, problems %v", roots, in.Problems)
	}
}
