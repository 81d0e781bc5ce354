package importer

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/gitops-engine/pkg/sync/syncwaves"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deployctl/deployctl/pkg/importer/appread"
)

// Argo CD's wave is strconv.Atoi of the annotation, untrimmed, else the
// Helm hook weight, else 0 (gitops-engine syncwaves.Wave).
func TestSyncWaveLikeArgoCD(t *testing.T) {
	for _, tc := range []struct {
		ann             map[string]string
		wave            int
		has, unreadable bool
	}{
		{nil, 0, false, false},
		{map[string]string{"argocd.argoproj.io/sync-wave": "5"}, 5, true, false},
		{map[string]string{"argocd.argoproj.io/sync-wave": "-30"}, -30, true, false},
		{map[string]string{"argocd.argoproj.io/sync-wave": "+7"}, 7, true, false},
		{map[string]string{"argocd.argoproj.io/sync-wave": " 5"}, 0, false, true},
		{map[string]string{"argocd.argoproj.io/sync-wave": "5 "}, 0, false, true},
		{map[string]string{"argocd.argoproj.io/sync-wave": "1e2"}, 0, false, true},
		{map[string]string{"argocd.argoproj.io/sync-wave": ""}, 0, false, true},
		{map[string]string{"argocd.argoproj.io/sync-wave": "one", "helm.sh/hook-weight": "3"}, 3, true, true},
		{map[string]string{"helm.sh/hook-weight": "-2"}, -2, true, false},
		{map[string]string{"argocd.argoproj.io/sync-wave": "4", "helm.sh/hook-weight": "3"}, 4, true, false},
		{map[string]string{"helm.sh/hook-weight": " 3"}, 0, false, false},
	} {
		w, has, unreadable := syncWave(tc.ann)
		if w != tc.wave || has != tc.has || unreadable != tc.unreadable {
			t.Errorf("%v: wave %d has %v unreadable %v, want %d %v %v", tc.ann, w, has, unreadable, tc.wave, tc.has, tc.unreadable)
		}
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetAnnotations(tc.ann)
		if argo := syncwaves.Wave(u); argo != w {
			t.Errorf("%v: wave %d, gitops-engine %d", tc.ann, w, argo)
		}
	}
}

func TestParseTrackingID(t *testing.T) {
	for in, want := range map[string]*trackingID{
		"root:argoproj.io/Application:argocd/web":       {App: "root", Group: "argoproj.io", Kind: "Application", Namespace: "argocd", Name: "web"},
		"team_root:argoproj.io/Application:team/web":    {App: "team_root", Group: "argoproj.io", Kind: "Application", Namespace: "team", Name: "web"},
		"root:/ConfigMap:/cm":                           {App: "root", Kind: "ConfigMap", Name: "cm"},
		"root:argoproj.io/Application:argocd/web:extra": nil, // name part has 2 "/"-parts only if no more ":"? → "argocd/web:extra"
		"root:argoproj.io/Application":                  nil,
		"root":                                          nil,
		"root:argoproj.io/x/Application:argocd/web":     nil,
		"root:argoproj.io/Application:argocd/web/x":     nil,
	} {
		got, ok := parseTrackingID(in)
		if want == nil {
			// Argo CD splits on the first two colons: the third part may
			// hold more, and then it still needs exactly one "/".
			if in == "root:argoproj.io/Application:argocd/web:extra" {
				if !ok || got.Name != "web:extra" {
					t.Errorf("%q: %+v %v", in, got, ok)
				}
				continue
			}
			if ok {
				t.Errorf("%q: parsed as %+v", in, got)
			}
			continue
		}
		if !ok || got != *want {
			t.Errorf("%q: %+v %v, want %+v", in, got, ok, *want)
		}
	}
}

func TestParentRef(t *testing.T) {
	app := func(labels, ann map[string]string) *appv1.Application {
		a := &appv1.Application{}
		a.Name, a.Namespace, a.Labels, a.Annotations = "web", "argocd", labels, ann
		return a
	}
	for _, tc := range []struct {
		a           *appv1.Application
		name, by    string
		mustResolve bool
		bad         string
	}{
		{app(map[string]string{"argocd.argoproj.io/instance": "root"}, nil), "root", "argocd.argoproj.io/instance", false, ""},
		{app(map[string]string{"app.kubernetes.io/instance": "root"}, nil), "root", "app.kubernetes.io/instance", true, ""},
		{app(nil, map[string]string{"argocd.argoproj.io/tracking-id": "root:argoproj.io/Application:argocd/web"}), "root", "argocd.argoproj.io/tracking-id", false, ""},
		// copied from another object's manifest: not this one's tracking
		{app(nil, map[string]string{"argocd.argoproj.io/tracking-id": "root:argoproj.io/Application:argocd/api"}), "", "", false, "describes another object"},
		{app(nil, map[string]string{"argocd.argoproj.io/tracking-id": "root"}), "", "", false, "is not <app>:<group>/<kind>:<namespace>/<name>"},
		// annotation+label: both say the same; the annotation is read
		{app(map[string]string{"argocd.argoproj.io/instance": "root"}, map[string]string{"argocd.argoproj.io/tracking-id": "root:argoproj.io/Application:argocd/web"}), "root", "argocd.argoproj.io/tracking-id", false, ""},
	} {
		got, bad := parentRef(tc.a)
		if got.name != tc.name || got.by != tc.by || got.mustResolve != tc.mustResolve || !strings.Contains(bad, tc.bad) || (tc.bad == "" && bad != "") {
			t.Errorf("%v %v: %+v %q", tc.a.Labels, tc.a.Annotations, got, bad)
		}
	}
}

func TestNormalizeRepo(t *testing.T) {
	same := []string{
		"https://github.com/Example-Org/gitops.git", "https://GitHub.com/Example-Org/gitops", "https://github.com/Example-Org/gitops/",
		"git@github.com:Example-Org/gitops.git", "ssh://git@github.com/Example-Org/gitops.git", "http://github.com/Example-Org/gitops.git/",
	}
	for _, u := range same {
		if got := normalizeRepo(u); got != "github.com/Example-Org/gitops" {
			t.Errorf("%s → %s", u, got)
		}
	}
	if normalizeRepo("https://github.com/example-org/other") == normalizeRepo(same[0]) {
		t.Error("two repositories are one")
	}
}

// Directory sources select files as argo-cd's findManifests does: manifest
// extensions, subfolders only with recurse, exclude then include as
// gobwas globs on the path relative to the source (where * crosses "/").
func TestManifestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.yaml", "b.yml", "c.json", "d.jsonnet", "e.txt", "sub/f.yaml", "sub/deep/g.yaml", ".hidden/h.yaml"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		d    appv1.ApplicationSourceDirectory
		want string
	}{
		{appv1.ApplicationSourceDirectory{}, "a.yaml b.yml c.json d.jsonnet"},
		{appv1.ApplicationSourceDirectory{Recurse: true}, ".hidden/h.yaml a.yaml b.yml c.json d.jsonnet sub/deep/g.yaml sub/f.yaml"},
		{appv1.ApplicationSourceDirectory{Recurse: true, Include: "*.yaml"}, ".hidden/h.yaml a.yaml sub/deep/g.yaml sub/f.yaml"},
		{appv1.ApplicationSourceDirectory{Recurse: true, Include: "sub/*"}, "sub/deep/g.yaml sub/f.yaml"},
		{appv1.ApplicationSourceDirectory{Recurse: true, Exclude: "{sub/*,*.json}"}, ".hidden/h.yaml a.yaml b.yml d.jsonnet"},
		{appv1.ApplicationSourceDirectory{Recurse: true, Include: "*.yaml", Exclude: "sub/deep/*"}, ".hidden/h.yaml a.yaml sub/f.yaml"},
	} {
		if got := strings.Join(manifestFiles(filepath.ToSlash(dir), tc.d), " "); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.d, got, tc.want)
		}
	}
	for _, tc := range []struct {
		existing string
		files    []string
		want     string
		ok       bool
	}{
		{"", []string{"a.yaml"}, "a.yaml", true},
		{"", []string{"a.yaml", "x/b[1].yaml"}, `{a.yaml,x/b\[1\].yaml}`, true},
		{"*.md", []string{"a.yaml"}, "{*.md,a.yaml}", true},
		{"{a,b}", []string{"c.yaml"}, "", false},
	} {
		got, ok := excludeGlob(tc.existing, tc.files)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q %v: %q %v", tc.existing, tc.files, got, ok)
		}
	}
}

// One table per rule of the nested waves (nested.go), on Applications
// tracked by label: each row says which apps wait for which.
func TestNestedWaveRules(t *testing.T) {
	type A struct {
		name, parent string
		wave         int
	}
	for _, tc := range []struct {
		rule string
		apps []A
		// waits: app → every app it must wait for (transitively); apps
		// not listed wait for nothing.
		waits map[string][]string
	}{
		{"1: waves order siblings only", []A{
			{"p", "", 0}, {"q", "", 0},
			{"p1", "p", 1}, {"p2", "p", 2},
			{"q1", "q", -5}, {"q9", "q", 9},
		}, map[string][]string{"p2": {"p1"}, "q9": {"q1"}}},
		{"2: the nearest lower wave, done with all below it", []A{
			{"root", "", 0},
			{"a", "root", -5}, {"b", "root", 0}, {"c", "root", 0}, {"d", "root", 7},
		}, map[string][]string{"b": {"a"}, "c": {"a"}, "d": {"a", "b", "c"}}},
		{"3: children wait for what their parent waits for", []A{
			{"root", "", 0},
			{"crds", "root", -5}, {"late", "root", 99},
			{"late-1", "late", -10}, {"late-2", "late", 0},
		}, map[string][]string{"late-1": {"crds"}, "late-2": {"crds", "late-1"}}},
		{"4: a parent is done when its descendants are", []A{
			{"root", "", 0},
			{"early", "root", 0}, {"e1", "early", 0}, {"e2", "early", 5}, {"deep", "e2", 0}, {"d1", "deep", 0},
			{"after", "root", 1},
		}, map[string][]string{"d1": {"e1"}, "after": {"e1", "d1"}}},
		{"6: a parent of nothing but Applications is no app", []A{
			{"root", "", 0}, {"mid", "root", 0}, {"leaf", "mid", 0},
		}, map[string][]string{}},
	} {
		in := &appread.Input{}
		var doc strings.Builder
		for _, a := range tc.apps {
			fmt.Fprintf(&doc, "---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\n  namespace: argocd\n  annotations: {argocd.argoproj.io/sync-wave: %q}\n", a.name, fmt.Sprint(a.wave))
			if a.parent != "" {
				fmt.Fprintf(&doc, "  labels: {argocd.argoproj.io/instance: %s}\n", a.parent)
			}
			fmt.Fprintf(&doc, "spec: {project: default, source: {repoURL: https://git.example.com/r.git, path: %s}, destination: {namespace: %s}}\n", a.name, a.name)
		}
		if err := in.Parse("rules.yaml", "x", []byte(doc.String())); err != nil {
			t.Fatal(err)
		}
		r, err := Import(in, Options{Name: "rules", StackFrom: StackFrom{Kind: "parent"}})
		if err != nil {
			t.Fatalf("%s: %v", tc.rule, err)
		}
		d := writeAndLoad(t, r)
		got := map[string][]string{}
		for _, a := range d.Apps() {
			for _, dep := range d.Graph.DepsClosure(a) {
				if dep != a && d.Node(dep) != nil && d.Node(dep).App != nil {
					got[a] = append(got[a], dep)
				}
			}
			sort.Strings(got[a])
		}
		for a, w := range tc.waits {
			sort.Strings(w)
			if !reflect.DeepEqual(got[a], w) {
				t.Errorf("rule %s: %s waits for %v, want %v", tc.rule, a, got[a], w)
			}
		}
		for a, g := range got {
			if _, ok := tc.waits[a]; !ok && len(g) > 0 {
				t.Errorf("rule %s: %s waits for %v, want nothing", tc.rule, a, g)
			}
		}
		if tc.rule[0] == '6' && !reflect.DeepEqual(d.Apps(), []string{"leaf"}) {
			t.Errorf("rule 6: apps %v", d.Apps())
		}
	}
}

// Rule 5, on a Git layout: parent p has one source of Applications and one
// of manifests (wave 0); it is an app for the manifests, beside its wave-0
// child, before its wave-5 child, and its next sibling waits for all.
func TestNestedWaveRuleOwnResources(t *testing.T) {
	dir := t.TempDir()
	app := func(name string, wave int, src string) string {
		return fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: %s, namespace: argocd, annotations: {argocd.argoproj.io/sync-wave: %q}}\n"+
			"spec:\n  project: default\n  destination: {namespace: %s}\n%s", name, fmt.Sprint(wave), name, src)
	}
	repo := "https://git.example.com/platform.git"
	leaf := func(name string) string {
		return fmt.Sprintf("  source: {repoURL: https://charts.example.com, chart: %s, targetRevision: 1.0.0}\n", name)
	}
	files := map[string]string{
		"root.yaml":              app("root", 0, "  source: {repoURL: "+repo+", path: apps}\n"),
		"apps/p.yaml":            app("p", 0, "  sources:\n  - {repoURL: "+repo+", path: p-apps}\n  - {repoURL: "+repo+"/, path: p-manifests}\n"),
		"apps/x.yaml":            app("x", 1, leaf("x")),
		"p-apps/c0.yaml":         app("c0", 0, leaf("c0")),
		"p-apps/c5.yaml":         app("c5", 5, leaf("c5")),
		"p-manifests/quota.yaml": "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: p}\n",
	}
	for f, body := range files {
		p := filepath.Join(dir, "platform", filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := importDir(t, "parent", filepath.Join(dir, "platform"))
	checkArgoSemantics(t, r, node("root", 0,
		withOwn(0, 0, node("p", 0, node("c0", 0), node("c5", 5))), // the quota: wave 0
		node("x", 1)))
	for _, s := range r.Platform.Spec.Stacks {
		for _, a := range s.Apps {
			if a.Name == "p" && (len(a.Sources) != 1 || a.Sources[0].Path != "p-manifests") {
				t.Errorf("p's own app: sources %+v, want only p-manifests", a.Sources)
			}
		}
	}
}

// Where an object of a parent's own resources sits in its sync.
func TestHookWave(t *testing.T) {
	for _, tc := range []struct {
		ann    map[string]string
		lo, hi int
		counts bool
	}{
		{nil, 0, 0, true},
		{map[string]string{"argocd.argoproj.io/sync-wave": "20"}, 20, 20, true},
		{map[string]string{"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/sync-wave": "20"}, math.MinInt, math.MinInt, true},
		{map[string]string{"argocd.argoproj.io/hook": "PostSync"}, math.MaxInt, math.MaxInt, true},
		{map[string]string{"argocd.argoproj.io/hook": "PreSync,PostSync"}, math.MinInt, math.MaxInt, true},
		{map[string]string{"argocd.argoproj.io/hook": "Sync", "argocd.argoproj.io/sync-wave": "3"}, 3, 3, true},
		{map[string]string{"argocd.argoproj.io/hook": "Skip"}, 0, 0, false},
		{map[string]string{"argocd.argoproj.io/hook": "SyncFail"}, 0, 0, false},
		{map[string]string{"helm.sh/hook": "post-install,post-upgrade"}, math.MaxInt, math.MaxInt, true},
		{map[string]string{"helm.sh/hook": "pre-install", "helm.sh/hook-weight": "5"}, math.MinInt, math.MinInt, true},
		{map[string]string{"helm.sh/hook": "test"}, 0, 0, false},
	} {
		lo, hi, counts := hookWave(tc.ann)
		if lo != tc.lo || hi != tc.hi || counts != tc.counts {
			t.Errorf("%v: %d…%d %v, want %d…%d %v", tc.ann, lo, hi, counts, tc.lo, tc.hi, tc.counts)
		}
	}
}
