package importer

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/generate"
	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/importer/argorules"
	"github.com/deployctl/deployctl/pkg/importer/argorules/syncwave"
	"github.com/deployctl/deployctl/pkg/plan"
	"github.com/deployctl/deployctl/pkg/spec"
)

func importDir(t *testing.T, from string, paths ...string) *Result {
	t.Helper()
	in, err := appread.Read(paths)
	if err != nil {
		t.Fatal(err)
	}
	sf, err := ParseStackFrom(from)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Import(in, Options{Name: "reference-platform", StackFrom: sf})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// typedApps are the Applications read from paths, typed, by name (an
// import's Sources keep only what the check compares).
func typedApps(t *testing.T, paths ...string) map[string]*appv1.Application {
	t.Helper()
	in, err := appread.Read(paths)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*appv1.Application{}
	for _, m := range in.Apps {
		out[m.App.Name] = m.App
	}
	return out
}

// writeAndLoad writes the imported spec and loads it back the way every
// command does.
func writeAndLoad(t *testing.T, r *Result) *dag.DAG {
	t.Helper()
	f := filepath.Join(t.TempDir(), "imported.yaml")
	if err := os.WriteFile(f, r.YAML, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := dag.Load(f)
	if err != nil {
		t.Fatalf("the imported spec does not load: %v\n%s", err, r.YAML)
	}
	return d
}

// The RFC's platform as an app-of-apps (root → one Application per stack,
// waves -30…+50 → the components, in a `kubectl get -A -o yaml` List with
// status) comes back as the reference platform's stacks and apps, and
// `generate` makes Applications equal to the originals.
func TestRoundTripRFC(t *testing.T) {
	r := importDir(t, "parent", "testdata/rfc")
	d := writeAndLoad(t, r)

	ref, err := dag.Load("../../examples/reference-platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Each wave of a parent's children is a stack of its own; by parent,
	// they are the reference platform's stacks.
	if got, want := byParent(d.Platform), membership(ref.Platform); !reflect.DeepEqual(got, want) {
		t.Errorf("apps by parent differ from the reference platform's stacks:\n got %v\nwant %v", got, want)
	}

	tree, _, err := generate.Tree(d, "platform")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Sources) != 41 {
		t.Fatalf("%d apps imported, want 41", len(r.Sources))
	}
	typed := typedApps(t, "testdata/rfc")
	for name := range r.Sources {
		data, ok := tree["applications/"+name+".yaml"]
		if !ok {
			t.Errorf("%s: no generated Application", name)
			continue
		}
		var gen appv1.Application
		if err := yaml.UnmarshalStrict(data, &gen); err != nil {
			t.Fatal(err)
		}
		orig := typed[name]
		if orig == nil {
			t.Fatalf("%s: not read", name)
		}
		// Every field of the spec: source(s) with Helm values, valuesObject
		// and parameters, destination, project, sync options and policy,
		// ignoreDifferences.
		if a, b := asJSON(t, orig.Spec), asJSON(t, gen.Spec); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: spec differs:\noriginal  %v\ngenerated %v", name, a, b)
		}
		if gen.Name != orig.Name {
			t.Errorf("%s: name %s", name, gen.Name)
		}
		// The Application's namespace too: backstage lives in team-portal
		// (applicationNamespace).
		if gen.Namespace != orig.Namespace {
			t.Errorf("%s: namespace %s, want %s", name, gen.Namespace, orig.Namespace)
		}
		for k, v := range orig.Labels {
			if k != argorules.Instance && gen.Labels[k] != v {
				t.Errorf("%s: label %s = %q, want %q", name, k, gen.Labels[k], v)
			}
		}
		for k, v := range orig.Annotations {
			if k == syncwave.ArgoCDAnnotation {
				if gen.Annotations[syncwave.Annotation] != v {
					t.Errorf("%s: wave %q kept as %q", name, v, gen.Annotations[syncwave.Annotation])
				}
			} else if gen.Annotations[k] != v {
				t.Errorf("%s: annotation %s = %q, want %q", name, k, gen.Annotations[k], v)
			}
		}
		if _, ok := gen.Annotations[syncwave.ArgoCDAnnotation]; ok {
			t.Errorf("%s: Argo CD's sync-wave annotation was kept: the root Application would order by waves again", name)
		}
	}
	if len(r.Differences) > 0 {
		t.Errorf("differences %v, want none", r.Differences)
	}
	if !bytes.Contains(r.YAML, []byte("        - name: backstage\n          applicationNamespace: team-portal\n")) {
		t.Errorf("backstage without its applicationNamespace:\n%s", r.YAML)
	}
	// Inferred edges are a transitive reduction already: nothing for lint
	// to call redundant until a person adds real dependencies.
	if red := d.Redundant(); len(red) > 0 {
		t.Errorf("redundant: %v", red)
	}
	// A real dependency written next to them: lint says which one already
	// covers it (keycloak's stack waits for platform-data's).
	withEdge := bytes.Replace(r.YAML, []byte("        - name: keycloak\n"),
		[]byte("        - name: keycloak\n          dependsOn: [keycloak-postgres]\n"), 1)
	doc, err := spec.Load("edited.yaml", withEdge)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := dag.Build(doc)
	if err != nil {
		t.Fatal(err)
	}
	red := d2.Redundant()
	if len(red) != 1 || !strings.Contains(red[0].Msg, "redundant dependency keycloak → keycloak-postgres: already implied by keycloak → stack security-wave-0 →") {
		t.Errorf("lint: %v", red)
	}
}

// byParent groups apps by their innermost parent (the path annotation).
func byParent(p *spec.Platform) map[string][]string {
	out := map[string][]string{}
	for _, s := range p.Spec.Stacks {
		for _, a := range s.Apps {
			path, _ := syncwave.ParsePath(a.Annotations[syncwave.PathAnnotation])
			parent := Ungrouped
			if len(path) > 0 {
				parent = path[len(path)-1].Name
			}
			out[parent] = append(out[parent], a.Name)
		}
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

func membership(p *spec.Platform) map[string][]string {
	out := map[string][]string{}
	for _, s := range p.Spec.Stacks {
		for _, a := range s.Apps {
			out[s.Name] = append(out[s.Name], a.Name)
		}
		sort.Strings(out[s.Name])
	}
	return out
}

func asJSON(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestInferredEdges(t *testing.T) {
	r := importDir(t, "parent", "testdata/rfc")
	deps := map[string][]string{}
	for _, s := range r.Platform.Spec.Stacks {
		deps["stack "+s.Name] = s.DependsOn
		for _, a := range s.Apps {
			deps[a.Name] = a.DependsOn
		}
	}
	// Written from testdata/rfc by hand: the root "platform" orders its
	// children foundation -30, storage-operators and networking -20,
	// storage -10, monitoring 0, platform-data and data-streaming 10,
	// security 20, development-workloads 30, developer-platform 40,
	// application-infrastructure 50; each of them orders its own children.
	for node, want := range map[string][]string{
		"stack foundation-wave-m10":                nil, // the first wave of the first child
		"stack foundation-wave-0":                  {"foundation-wave-m10"},
		"stack storage-operators":                  {"foundation-wave-0"}, // one wave: the parent's name
		"stack networking":                         {"foundation-wave-0"},
		"stack storage-wave-0":                     {"networking", "storage-operators"},
		"stack storage-wave-10":                    {"storage-wave-0"},
		"stack monitoring-wave-m20":                {"storage-wave-10"},
		"stack monitoring-wave-m10":                {"monitoring-wave-m20"},
		"stack monitoring-wave-0":                  {"monitoring-wave-m10"},
		"stack platform-data-wave-0":               {"monitoring-wave-0"},
		"stack platform-data-wave-5":               {"platform-data-wave-0"},
		"stack data-streaming-wave-m10":            {"monitoring-wave-0"},
		"stack data-streaming-wave-0":              {"data-streaming-wave-m10"},
		"stack security-wave-m10":                  {"data-streaming-wave-0", "platform-data-wave-5"},
		"stack security-wave-m5":                   {"security-wave-m10"},
		"stack security-wave-0":                    {"security-wave-m5"},
		"stack security-wave-10":                   {"security-wave-0"},
		"stack development-workloads-wave-m10":     {"security-wave-10"},
		"stack development-workloads-wave-0":       {"development-workloads-wave-m10"},
		"stack developer-platform-wave-m10":        {"development-workloads-wave-0"},
		"stack developer-platform-wave-0":          {"developer-platform-wave-m10"},
		"stack application-infrastructure-wave-0":  {"developer-platform-wave-0"},
		"stack application-infrastructure-wave-10": {"application-infrastructure-wave-0"},
		"keycloak":      nil, // apps wait through their stacks only
		"redis-cluster": nil,
	} {
		if !reflect.DeepEqual(deps[node], want) {
			t.Errorf("%s depends on %v, want %v", node, deps[node], want)
		}
	}
	if len(deps) != 23+41 {
		t.Errorf("%d stacks and apps, want 23 stacks and 41 apps", len(deps))
	}
	for _, line := range []string{
		"        - foundation-wave-m10 # inferred from sync-wave -10 → 0 in foundation\n",
		"        - foundation-wave-0 # inferred from sync-wave -30 → -20 in platform\n",
		"            deployctl.dev/sync-wave: \"-10\"\n            deployctl.dev/sync-wave-path: platform@0/foundation@-30\n",
		"          annotations: {deployctl.dev/sync-wave-path: platform@0/foundation@-30}\n", // sealed-secrets: no wave of its own
		"          syncOptions: []\n", // falco had none; the default has two
	} {
		if !strings.Contains(string(r.YAML), line) {
			t.Errorf("the spec lacks %q", line)
		}
	}
	if len(r.Edges) != 24 { // 22 stacks after one, two after two (46 app edges before)
		t.Errorf("%d edges", len(r.Edges))
	}
	for _, e := range r.Edges {
		if !e.Stack {
			t.Errorf("an app edge %v", e)
		}
	}
}

// The waves the import keeps (annotations) drive plan --compare-waves on
// the imported spec, and through testdata/rfc-waves.yaml on the
// hand-written reference platform.
func TestWavesFileMatchesImport(t *testing.T) {
	r := importDir(t, "parent", "testdata/rfc")
	var b strings.Builder
	b.WriteString("# The RFC platform's sync waves (app → wave inside its parent, parents with theirs),\n" +
		"# as `deployctl import testdata/rfc` keeps them: for plan --compare-waves --waves.\n")
	var names []string
	waves := map[string]map[string]string{}
	for _, s := range r.Platform.Spec.Stacks {
		for _, a := range s.Apps {
			names = append(names, a.Name)
			w := a.Annotations[syncwave.Annotation]
			if w == "" {
				w = "0"
			}
			waves[a.Name] = map[string]string{"wave": w, "path": a.Annotations[syncwave.PathAnnotation]}
		}
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteString(n + ": {wave: " + waves[n]["wave"] + ", path: " + waves[n]["path"] + "}\n")
	}
	got, err := os.ReadFile("testdata/rfc-waves.yaml")
	if os.Getenv("UPDATE") != "" {
		err = os.WriteFile("testdata/rfc-waves.yaml", []byte(b.String()), 0o644)
		got = []byte(b.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != b.String() {
		t.Errorf("testdata/rfc-waves.yaml is stale (UPDATE=1 go test ./pkg/importer rewrites it):\n%s", b.String())
	}

	// On the imported spec itself, the inferred edges are the waves'
	// barriers: the DAG takes as long as the waves until they are pruned.
	c, err := plan.CompareWaves(writeAndLoad(t, r), "", plan.WaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "app-of-apps" || c.Ratio != 1 {
		t.Errorf("model %s, ratio %v (waves %v, DAG %v)", c.Model, c.Ratio, c.WaveMakespan, c.DAGMakespan)
	}
}

// The same Applications, read in another order or form, give the same bytes.
func TestDeterministic(t *testing.T) {
	a := importDir(t, "parent", "testdata/rfc")
	in, err := appread.Read([]string{"testdata/rfc/components.yaml", "testdata/rfc/app-of-apps.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(in.Apps)-1; i < j; i, j = i+1, j-1 {
		in.Apps[i], in.Apps[j] = in.Apps[j], in.Apps[i]
	}
	b, err := Import(in, Options{Name: "reference-platform", StackFrom: StackFrom{Kind: "parent"}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.YAML, b.YAML) {
		t.Error("another input order gives another spec")
	}
}

func TestStackFromLabelAnnotationFolder(t *testing.T) {
	byLabel := importDir(t, "label=platform.example.com/stack", "testdata/rfc")
	byParentApp := importDir(t, "parent", "testdata/rfc")
	if !reflect.DeepEqual(membership(byLabel.Platform), byParent(byParentApp.Platform)) {
		t.Error("label stacks are not the parents' children")
	}
	// A label stack orders its apps by wave with app edges between
	// neighbouring waves: 34 inside stacks, 12 between.
	if len(byLabel.Edges) != 46 {
		t.Errorf("%d edges by label", len(byLabel.Edges))
	}

	r := importDir(t, "folder", "testdata/folders")
	if got := membership(r.Platform); !reflect.DeepEqual(got, map[string][]string{"apps": {"database", "web"}, "base": {"cert-manager", "ingress-nginx"}}) {
		t.Errorf("folder stacks %v", got)
	}
	deps := map[string][]string{}
	for _, s := range r.Platform.Spec.Stacks {
		for _, a := range s.Apps {
			deps[a.Name] = a.DependsOn
		}
		if len(s.DependsOn) > 0 {
			t.Errorf("stack %s depends on %v: folders have no parent to order them", s.Name, s.DependsOn)
		}
	}
	if !reflect.DeepEqual(deps, map[string][]string{"web": {"database"}, "ingress-nginx": {"cert-manager"}, "database": nil, "cert-manager": nil}) {
		t.Errorf("deps %v", deps)
	}
	if !hasNote(r, "order between stacks not inferred for base, apps") {
		t.Errorf("notes %v", r.Notes)
	}
	if len(r.Differences) != 0 {
		t.Errorf("differences %v", r.Differences)
	}

	in := &appread.Input{}
	if err := in.Parse("inline.yaml", "x", []byte(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: a, namespace: argocd, annotations: {example.com/group: Core Services}}
spec: {project: default, source: {repoURL: r, path: a}, destination: {server: https://kubernetes.default.svc, namespace: a}}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: b, namespace: argocd}
spec: {project: default, source: {repoURL: r, path: b}, destination: {server: https://kubernetes.default.svc, namespace: b}}
`)); err != nil {
		t.Fatal(err)
	}
	res, err := Import(in, Options{Name: "p", StackFrom: StackFrom{Kind: "annotation", Key: "example.com/group"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := membership(res.Platform); !reflect.DeepEqual(got, map[string][]string{"core-services": {"a"}, Ungrouped: {"b"}}) {
		t.Errorf("annotation stacks %v", got)
	}
	if !hasNote(res, `stack names made unique DNS labels: "Core Services" → core-services`) || !hasNote(res, "no annotation example.com/group: in stack ungrouped: b") {
		t.Errorf("notes %v", res.Notes)
	}
}

// What the spec cannot express is reported field by field, and what the
// import changes on purpose is in its notes; the file stays valid.
func TestLossyApplications(t *testing.T) {
	r := importDir(t, "parent", "testdata/lossy")
	writeAndLoad(t, r)
	got := map[string][]string{}
	for _, d := range r.Differences {
		got[d.App] = append(got[d.App], d.Field)
	}
	want := map[string][]string{
		"web-frontend":        {"metadata.name"},
		"db-team-a":           {"metadata.name"},
		"app-deployctl-tools": {"metadata.name"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("differences %v\nwant %v", got, want)
	}
	for _, n := range []string{
		"renamed to unique DNS labels",
		"argocd/web.frontend → web-frontend",
		"team-a/db → db-team-a",
		"argocd/deployctl-tools → app-deployctl-tools",
		`argocd/web.frontend: sync-wave "one" is not an integer`,
		"generated by an ApplicationSet",
		"not Applications, left out: AppProject team-a",
		"label app.kubernetes.io/managed-by left out of 1 app: app-deployctl-tools",
		"annotation meta.helm.sh/release-name left out of 1 app",
		"4 apps had no resources finalizer",
	} {
		if !hasNote(r, n) {
			t.Errorf("no note %q in %v", n, r.Notes)
		}
	}
	// Argo CD's sync retry, allowEmpty, the managed namespace's labels,
	// spec.info and helm.skipCrds are spec fields now: written, not lost.
	for _, want := range []string{
		"automated: {prune: true, allowEmpty: true}",
		"backoff: {duration: 5s, factor: 2, maxDuration: 3m}",
		"labels: {team: web}",
		"- {name: owner, value: web-team}",
		"helm: {releaseName: db, version: v3, skipCrds: true}",
		"plugin: {name: envsubst}",
		"revisionHistoryLimit: 3",
		"applicationNamespace: team-a",
	} {
		if !bytes.Contains(r.YAML, []byte(want)) {
			t.Errorf("no %q in:\n%s", want, r.YAML)
		}
	}
}

func hasNote(r *Result, s string) bool {
	for _, n := range r.Notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

func TestImportErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "no Argo CD Application found"},
		{"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a, namespace: argocd}\nspec: {project: default, destination: {namespace: a}}\n",
			"in.yaml:1: Application a has no spec.source or spec.sources: if it is a Kustomize patch"},
		{"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a, namespace: argocd}\nspec: {project: default, source: {repoURL: r, chart: c}, destination: {namespace: a}}\n",
			`chart "c" has no targetRevision`},
		{"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a, namespace: argocd}\nspec: {project: default, source: {repoURL: r}, destination: {namespace: a}}\n",
			"has no path or chart"},
		{"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a, namespace: argocd}\nspec: {source: {repoURL: r, path: p}, info: [{name: a}]}\n",
			"in.yaml:1: not a valid Application a, Kubernetes refuses it: no spec.destination (Argo CD's Application CRD requires it); no spec.project (Argo CD's Application CRD requires it); no spec.info[0].value"},
		{"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: Web_App, namespace: argocd}\nspec: {project: default, source: {repoURL: r, path: p}, destination: {namespace: a}}\n",
			`in.yaml:1: not a valid Application Web_App, Kubernetes refuses it: metadata.name "Web_App": a lowercase RFC 1123 subdomain`},
		{"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {namespace: argocd}\nspec: {}\n", "without metadata.name"},
		{"kind: List\nitems: [3]\n", "in.yaml:2 items[0]: not an object (a scalar)"},
		{"a: [", "in.yaml:1: YAML: did not find expected node content"},
	} {
		in := &appread.Input{}
		err := in.Parse("in.yaml", "x", []byte(tc.doc))
		if err == nil {
			_, err = Import(in, Options{Name: "p", StackFrom: StackFrom{Kind: "parent"}})
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.doc, err, tc.want)
		}
	}
}

func TestParseStackFrom(t *testing.T) {
	for in, want := range map[string]StackFrom{
		"parent": {Kind: "parent"}, "folder": {Kind: "folder"},
		"label=a/b": {Kind: "label", Key: "a/b"}, "annotation=x=y": {Kind: "annotation", Key: "x=y"},
	} {
		if got, err := ParseStackFrom(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "label", "label=", "owner", "folder=x"} {
		if _, err := ParseStackFrom(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestNames(t *testing.T) {
	used := map[string]bool{"db": true, "db-team-a": true}
	for in, want := range map[string]string{"Web.Frontend": "web-frontend", "--a--": "a", strings.Repeat("x", 70): strings.Repeat("x", 63)} {
		if got := dnsLabel(in); got != want {
			t.Errorf("dnsLabel(%q) = %q", in, got)
		}
	}
	if got := unique("db", "team-a", used); got != "db-team-a-2" {
		t.Errorf("unique: %s", got)
	}
	if got := unique(strings.Repeat("y", 63), "ns", map[string]bool{strings.Repeat("y", 63): true}); len(got) > 63 || !strings.HasSuffix(got, "-ns") {
		t.Errorf("unique long: %s", got)
	}
}
