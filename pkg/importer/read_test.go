package importer

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/importer/appdump"
	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/spec"
)

func readErr(t *testing.T, paths ...string) string {
	t.Helper()
	in, err := appread.Read(paths)
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
	if err := appdump.WriteFiles(dir, files); err != nil {
		t.Fatal(err)
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
// Applications. Its two ApplicationSets have List generators, patched in
// by the overlay: they are expanded into the three Applications Argo CD
// makes of them.
func TestKustomizeTree(t *testing.T) {
	dir := "testdata/kustomize-ai-accelerator"
	r := importDir(t, "parent", dir)
	got := apps(r)
	var names []string
	for n := range got {
		names = append(names, n)
	}
	sort.Strings(names)
	if want := []string{"cluster-config-app-of-apps", "leader-worker-set-operator", "openshift-ai-operator", "user-workload-monitoring"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("apps %v, want %v", names, want)
	}
	if len(r.Differences) != 0 {
		t.Errorf("differences %v", r.Differences)
	}
	typed := typedApps(t, dir)
	repo := "https://github.com/redhat-ai-services/ai-accelerator.git"
	for name, path := range map[string]string{
		"cluster-config-app-of-apps": "clusters/overlays/rhoai-eus-2.25",
		// {{values.path}} of the overlay's patch-configs-list.yaml and
		// patch-operators-list.yaml.
		"user-workload-monitoring":   "components/cluster-configs/user-workload-monitoring/overlays/default",
		"leader-worker-set-operator": "components/operators/leader-worker-set/aggregate/overlays/default",
		"openshift-ai-operator":      "components/operators/openshift-ai/aggregate/overlays/stable-2.25",
	} {
		m := typed[name]
		src := m.Spec.Source
		if src == nil || src.RepoURL != repo || src.TargetRevision != "main" || src.Path != path {
			t.Errorf("%s: source %+v", name, src)
		}
		if m.Namespace != "openshift-gitops" {
			t.Errorf("%s: namespace %q", name, m.Namespace)
		}
	}
	// The template's retry (limit 5, 5s, factor 2, 20m), and the resources
	// finalizer the controller adds to a template without finalizers.
	op := typed["openshift-ai-operator"]
	if rt := op.Spec.SyncPolicy.Retry; rt == nil || rt.Limit != 5 || rt.Backoff.Duration != "5s" || *rt.Backoff.Factor != 2 || rt.Backoff.MaxDuration != "20m" {
		t.Errorf("retry %+v", op.Spec.SyncPolicy.Retry)
	}
	if !reflect.DeepEqual(op.Finalizers, []string{"resources-finalizer.argocd.argoproj.io"}) || op.Labels["gitops"] != "operator" {
		t.Errorf("metadata %+v", op.ObjectMeta)
	}
	out := dir + "/clusters/overlays/rhoai-eus-2.25 (kustomize build output)"
	for _, n := range []string{
		"built with Kustomize, its output read instead of its files: " + dir + "/clusters/overlays/rhoai-eus-2.25",
		"2 ApplicationSets expanded into their Applications as Argo CD's ApplicationSet controller makes them (List generator, {{key}} templates): " +
			"cluster-configs (" + out + ":22) → user-workload-monitoring, " +
			"cluster-operators (" + out + ":67) → leader-worker-set-operator, openshift-ai-operator",
		"not Applications, left out: AppProject cluster-config (" + out + ":117), ConfigMap gitops-repo-config-98t8c5m467 (" + out + ":132)",
	} {
		if !hasNote(r, n) {
			t.Errorf("no note %q in\n%s", n, strings.Join(r.Notes, "\n"))
		}
	}

	// Its kustomization.yaml stands for the folder.
	r2 := importDir(t, "parent", dir+"/clusters/overlays/rhoai-eus-2.25/kustomization.yaml")
	if len(r2.Sources) != 4 {
		t.Errorf("from the kustomization file: %d apps", len(r2.Sources))
	}

	// The base alone is built as it is: its placeholder path, unpatched,
	// and its ApplicationSets' placeholder elements, which Argo CD refuses.
	r = importDir(t, "parent", dir+"/components/argocd/apps/base")
	if p := apps(r)["cluster-config-app-of-apps"].Source.Path; p != "patch-me-see-overlays" {
		t.Errorf("base alone: path %q", p)
	}
}

func TestKustomizeRemoteBaseRefused(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"base/kustomization.yaml": "resources:\n- https://github.com/redhat-ai-services/ai-accelerator//components/argocd/apps/base?ref=main\n" +
			"patches:\n- path: https://example.com/patch.yaml\n",
		// The overlay is not built: its base would fetch.
		"overlay/kustomization.yaml": "resources:\n- ../base\n",
	})
	got := readErr(t, dir)
	why := ": not a local path (Kustomize reads it as a URL or a Git repository); the import reads the input's own files only, " +
		"never the network: build it first: kustomize build " + dir + "/base | deployctl import -"
	want := "2 problems in the input (nothing was written):\n  " +
		dir + `/base/kustomization.yaml: resources: "https://github.com/redhat-ai-services/ai-accelerator//components/argocd/apps/base?ref=main"` + why + "\n  " +
		dir + `/base/kustomization.yaml: patches.path: "https://example.com/patch.yaml"` + why
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

// A file of only an ApplicationSet it cannot expand (the base's
// placeholder element is a string) names it, says why, and says where its
// Applications can be imported from.
func TestOnlyApplicationSets(t *testing.T) {
	f := "testdata/kustomize-ai-accelerator/components/argocd/apps/base/cluster-configs-applicationset.yaml"
	got := readErr(t, f)
	want := "no Argo CD Application found in the input; 1 ApplicationSet (cluster-configs (" + f + ":1; not expanded: list element 0 is not an object (Argo CD refuses it))) generate their Applications " +
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

// rzp-infrastructure's production patch of its vector Application, which
// no kustomization uses, read as a file: named as what it likely is.
func TestPatchFileNamed(t *testing.T) {
	f := "testdata/rzp-infrastructure/overlays/production/vector-production-patch.yaml"
	got := readErr(t, "testdata/rzp-infrastructure")
	want := "1 problem in the input (nothing was written):\n  " + f + ":2: Application vector has no spec.source or spec.sources: " +
		"if it is a Kustomize patch, import what the kustomization that uses it builds (its folder, or kustomize build DIR | deployctl import -); " +
		"else give it a source"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// `automated: {}` turns automated sync on: it is not an empty value to
// the round trip, and it comes back.
func TestAutomatedEmptyIsNotAbsent(t *testing.T) {
	orig := map[string]any{"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"project": "default",
		"syncPolicy": map[string]any{"automated": map[string]any{}, "managedNamespaceMetadata": map[string]any{}}}}
	d := Compare("a", orig, &compile.Application{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: appv1.ApplicationSpec{Project: "default"}})
	var fields []string
	for _, x := range d {
		fields = append(fields, x.Field)
	}
	if want := []string{"spec.syncPolicy"}; !reflect.DeepEqual(fields, want) {
		t.Errorf("fields %v, want %v", fields, want)
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{"a.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a, namespace: argocd}\n" +
		"spec: {project: default, source: {repoURL: r, path: p}, destination: {server: \"https://kubernetes.default.svc\", namespace: n}, " +
		"syncPolicy: {automated: {}, managedNamespaceMetadata: {}}}\n"})
	r := importDir(t, "parent", dir)
	if len(r.Differences) != 0 {
		t.Errorf("differences %v", r.Differences)
	}
	if y := string(r.YAML); !strings.Contains(y, "    automated: {}\n") || !strings.Contains(y, "    managedNamespaceMetadata: {}\n") {
		t.Errorf("spec:\n%s", r.YAML)
	}
}

// Status is the server's: one that would not decode as Argo CD's type is
// not an error, and the same Application with another status (a Git file
// and a live dump) is the same Application. Only what the round trip
// compares is kept (Manifest.Raw).
func TestStatusIgnored(t *testing.T) {
	orig, err := os.ReadFile("testdata/rivendell/kubernetes/apps/metallb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"git/metallb.yaml":  string(orig),
		"live/metallb.yaml": string(orig) + "status:\n  sync: [not, an, object]\n  health: {status: Healthy}\n",
	})
	r := importDir(t, "folder", dir)
	if n := "read twice, the same both times, kept once: argocd/metallb (" + dir + "/git/metallb.yaml:1 and " + dir + "/live/metallb.yaml:1)"; !hasNote(r, n) {
		t.Errorf("no note %q in %v", n, r.Notes)
	}
	if raw := string(r.Sources["metallb"].Raw); strings.Contains(raw, "status") || !strings.Contains(raw, `"spec":`) {
		t.Errorf("Raw %s", raw)
	}
}

// Files joined without "---" (cat *.yaml > all.yaml): one message per
// repeated key, not one per pair of occurrences, and a hint.
func TestUnseparatedDocuments(t *testing.T) {
	orig, err := os.ReadFile("testdata/rivendell/kubernetes/apps/metallb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.TrimPrefix(string(orig), "---\n")
	dir := t.TempDir()
	write(t, dir, map[string]string{"all.yaml": doc + doc + doc + doc})
	got := readErr(t, dir)
	if n := strings.Count(got, `mapping key "apiVersion" already defined`); n != 3 {
		t.Errorf("%d apiVersion messages for 4 joined documents, want 3:\n%s", n, got)
	}
	if !strings.Contains(got, `were files joined without a "---" line between them?`) {
		t.Errorf("no hint:\n%s", got)
	}
}
