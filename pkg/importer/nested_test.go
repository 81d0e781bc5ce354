package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/importer/appread"
)

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
			fmt.Fprintf(&doc, "spec: {project: default, source: {repoURL: https://git.example.com/r.git, path: %s}, destination: {server: https://kubernetes.default.svc, namespace: %s}}\n", a.name, a.name)
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
			"spec:\n  project: default\n  destination: {server: https://kubernetes.default.svc, namespace: %s}\n%s", name, fmt.Sprint(wave), name, src)
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
