package importer

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/importer/appread"
)

// The parent rules P1–P4 of README "Import", one table each. Every row is
// a small checkout written to a temporary folder and imported whole.

const repoURL = "https://github.com/example/gitops.git"

// appYAML is an Application of the checkout: its source is path in the
// same repository; extra is added under spec.source (indented YAML).
func appYAML(name, wave, path, extra string) string {
	s := fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\n  namespace: argocd\n", name)
	if wave != "" {
		s += fmt.Sprintf("  annotations: {argocd.argoproj.io/sync-wave: %q}\n", wave)
	}
	s += fmt.Sprintf("spec:\n  project: default\n  destination: {server: https://kubernetes.default.svc, namespace: %s}\n"+
		"  syncPolicy: {automated: {prune: true, selfHeal: true}}\n  source:\n    repoURL: %s\n    targetRevision: main\n    path: %s\n", name, repoURL, path)
	return s + extra
}

// appSetYAML is an ApplicationSet the import expands: a List generator of
// the names, each an Application of path apps/NAME.
func appSetYAML(name string, elems ...string) string {
	s := fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: %s\n  namespace: argocd\nspec:\n  generators:\n  - list:\n      elements:\n", name)
	for _, e := range elems {
		s += fmt.Sprintf("      - {name: %s}\n", e)
	}
	return s + "  template:\n    metadata: {name: '{{name}}'}\n    spec:\n      project: default\n" +
		"      destination: {server: https://kubernetes.default.svc, namespace: '{{name}}'}\n" +
		"      source: {repoURL: " + repoURL + ", targetRevision: main, path: 'apps/{{name}}'}\n"
}

const project = "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: team\n  namespace: argocd\nspec:\n  sourceRepos: ['*']\n"

// gitAppSet cannot be expanded (a Git generator: its Applications exist
// only in the cluster), so it is the parent's own resource.
const gitAppSet = "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: from-git\n  namespace: argocd\nspec:\n" +
	"  generators:\n  - git: {repoURL: " + repoURL + ", revision: main, directories: [{path: 'tenants/*'}]}\n" +
	"  template:\n    metadata: {name: '{{path.basename}}'}\n    spec: {project: default, destination: {namespace: x}, source: {repoURL: " + repoURL + ", path: '{{path}}'}}\n"

func kustomization(files ...string) string {
	return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " + strings.Join(files, "\n- ") + "\n"
}

// importTree writes files into a fresh checkout and imports it whole.
func importTree(t *testing.T, files map[string]string) (*Result, error) {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, files)
	in, err := appread.Read([]string{dir})
	if err != nil {
		return nil, err
	}
	return Import(in, Options{Name: "p", StackFrom: StackFrom{Kind: "parent"}})
}

// appsCase is a checkout and the apps its import must have (app@stack).
type appsCase struct {
	name  string
	files map[string]string
	apps  []string
}

func appsTable(t *testing.T, cases []appsCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := importTree(t, tc.files)
			if err != nil {
				t.Fatal(err)
			}
			if got := specApps(r); !reflect.DeepEqual(got, tc.apps) {
				t.Errorf("apps %v, want %v\n%s", got, tc.apps, strings.Join(r.Notes, "\n"))
			}
		})
	}
}

// builtTree is the builder of a checkout's import, built and not checked.
func builtTree(t *testing.T, files map[string]string) *builder {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, files)
	in, err := appread.Read([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder(Options{Name: "p", StackFrom: StackFrom{Kind: "parent"}})
	if err := b.build(in); err != nil {
		t.Fatal(err)
	}
	return b
}

func specApps(r *Result) []string {
	var out []string
	for _, s := range r.Platform.Spec.Stacks {
		for _, a := range s.Apps {
			out = append(out, a.Name+"@"+s.Name)
		}
	}
	sort.Strings(out)
	return out
}

// P1: a parent is found from what its source renders, a directory or a
// Kustomize build, and through the ApplicationSets the import expands.
func TestParentRuleP1Recognised(t *testing.T) {
	appsTable(t, []appsCase{
		{"directory of Application files", map[string]string{
			"root.yaml":   appYAML("root", "", "apps", ""),
			"apps/a.yaml": appYAML("a", "0", "a", ""), "apps/b.yaml": appYAML("b", "1", "b", ""),
		}, []string{"a@root-wave-0", "b@root-wave-1"}},
		{"Kustomize folder listing the Application files", map[string]string{
			"root.yaml":               appYAML("root", "", "apps", ""),
			"apps/kustomization.yaml": kustomization("a.yaml", "b.yaml"),
			"apps/a.yaml":             appYAML("a", "0", "a", ""), "apps/b.yaml": appYAML("b", "1", "b", ""),
		}, []string{"a@root-wave-0", "b@root-wave-1"}},
		{"Kustomize overlay of a base of Application files", map[string]string{
			"root.yaml":                       appYAML("root", "", "apps/overlay", ""),
			"apps/overlay/kustomization.yaml": kustomization("../base"),
			"apps/base/kustomization.yaml":    kustomization("a.yaml"),
			"apps/base/a.yaml":                appYAML("a", "0", "a", ""),
		}, []string{"a@root"}},
		{"folder of ApplicationSets the import expands", map[string]string{
			"root.yaml":     appYAML("root", "", "sets", ""),
			"sets/set.yaml": appSetYAML("set", "x", "y"),
		}, []string{"x@set", "y@set"}},
		{"another repository's folder of the same name is no parent", map[string]string{
			"root.yaml":   strings.Replace(appYAML("root", "", "apps", ""), "example/gitops", "example/other", 1),
			"apps/a.yaml": appYAML("a", "0", "a", ""),
			"x.yaml":      appYAML("x", "", "apps", ""),
		}, []string{"a@x", "root@ungrouped"}},
	})
}

// P2: what a parent renders that deployctl creates (its children, the
// ApplicationSets the import expanded, itself) is never deployed by the
// parent; a parent that renders nothing else is no app.
func TestParentRuleP2NotAnApp(t *testing.T) {
	appsTable(t, []appsCase{
		{"Kustomize root of Applications only", map[string]string{
			"root.yaml":               appYAML("root", "", "apps", ""),
			"apps/kustomization.yaml": kustomization("a.yaml"),
			"apps/a.yaml":             appYAML("a", "", "a", ""),
		}, []string{"a@root"}},
		{"ApplicationSets only, all expanded", map[string]string{
			"root.yaml":               appYAML("root", "", "sets", ""),
			"sets/kustomization.yaml": kustomization("one.yaml", "two.yaml"),
			"sets/one.yaml":           appSetYAML("one", "x"), "sets/two.yaml": appSetYAML("two", "y"),
		}, []string{"x@one", "y@two"}},
		{"a root that renders itself and its children", map[string]string{
			"apps/kustomization.yaml": kustomization("root.yaml", "a.yaml"),
			"apps/root.yaml":          appYAML("root", "", "apps", ""),
			"apps/a.yaml":             appYAML("a", "", "a", ""),
		}, []string{"a@root"}},
	})
}

// P3: a parent that renders resources of its own besides what deployctl
// creates is an app that renders only them: a Kustomize source gets
// `$patch: delete` patches for the rest, a directory source an exclude.
func TestParentRuleP3OwnResources(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		// own is what the parent's app must still render, gone what it
		// must not (kinds and names, as "Kind name").
		own, gone []string
		// source is what its source must say (a substring of its YAML).
		source string
	}{
		{"Kustomize: an AppProject beside the children", map[string]string{
			"root.yaml":               appYAML("root", "", "apps", ""),
			"apps/kustomization.yaml": kustomization("project.yaml", "a.yaml", "b.yaml"),
			"apps/project.yaml":       project,
			"apps/a.yaml":             appYAML("a", "", "a", ""), "apps/b.yaml": appYAML("b", "", "b", ""),
		}, []string{"AppProject team"}, []string{"Application a", "Application b"}, "name: a|b"},
		{"Kustomize: an ApplicationSet the import cannot expand beside one it expands", map[string]string{
			"root.yaml":               appYAML("root", "", "sets", ""),
			"sets/kustomization.yaml": kustomization("list.yaml", "git.yaml"),
			"sets/list.yaml":          appSetYAML("list", "x"),
			"sets/git.yaml":           gitAppSet,
		}, []string{"ApplicationSet from-git"}, []string{"ApplicationSet list"}, "kind: ApplicationSet"},
		{"Kustomize: the root renders itself, its children and a project", map[string]string{
			"apps/kustomization.yaml": kustomization("root.yaml", "a.yaml", "project.yaml"),
			"apps/root.yaml":          appYAML("root", "", "apps", ""),
			"apps/a.yaml":             appYAML("a", "", "a", ""),
			"apps/project.yaml":       project,
		}, []string{"AppProject team"}, []string{"Application a", "Application root"}, "name: a|root"},
		{"directory: an AppProject file and an ApplicationSet the import expands", map[string]string{
			"root.yaml":         appYAML("root", "", "apps", ""),
			"apps/project.yaml": project,
			"apps/set.yaml":     appSetYAML("set", "x"),
			"apps/a.yaml":       appYAML("a", "", "a", ""),
		}, []string{"AppProject team"}, []string{"Application a", "ApplicationSet set"}, "exclude: '{a.yaml,set.yaml}'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := builtTree(t, tc.files)
			root := b.byKey["argocd/root"]
			if !root.self {
				t.Fatalf("root is not kept as an app for its own resources\n%s", strings.Join(b.res.Notes, "\n"))
			}
			var got []string
			for i, s := range b.own[root].sources {
				objs, _ := b.renderSource(s, root.m.V3.Source(b.own[root].orig[i]).AnyExtension())
				for _, o := range objs {
					got = append(got, o.Kind+" "+o.Name)
				}
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, tc.own) {
				t.Errorf("its app renders %v, want %v", got, tc.own)
			}
			b.release()
			if err := b.check(); err != nil {
				t.Fatal(err)
			}
			if len(b.res.Differences) != 0 {
				t.Errorf("differences %v", b.res.Differences)
			}
			if !strings.Contains(string(b.res.YAML), tc.source) {
				t.Errorf("no %q in\n%s", tc.source, b.res.YAML)
			}
			for _, g := range tc.gone {
				if slicesContains(got, g) {
					t.Errorf("its app still renders %s", g)
				}
			}
		})
	}
}

func slicesContains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// P4: one manager is the self-check's invariant: a spec that would have an
// Application created by deployctl and rendered by a generated app's
// source is refused, whatever path of the importer made it. Each row
// breaks a correct build the way a future bug could.
func TestParentRuleP4OneManager(t *testing.T) {
	kustomizeRoot := map[string]string{
		"root.yaml":               appYAML("root", "", "apps", ""),
		"apps/kustomization.yaml": kustomization("project.yaml", "a.yaml"),
		"apps/project.yaml":       project,
		"apps/a.yaml":             appYAML("a", "", "a", ""),
	}
	dirRoot := map[string]string{
		"root.yaml":         appYAML("root", "", "apps", ""),
		"apps/project.yaml": project,
		"apps/set.yaml":     appSetYAML("set", "x"),
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		// breakIt undoes part of what the layout did.
		breakIt func(b *builder)
		want    string
	}{
		{"own app without its delete patches", kustomizeRoot, func(b *builder) {
			o := b.own[b.byKey["argocd/root"]]
			o.sources[0].Kustomize = nil
			delete(o.patched, 0)
		}, "Application argocd/a is created by deployctl (app a) and rendered by app root's source 0 (kustomize build apps)"},
		{"own app without its exclude", dirRoot, func(b *builder) {
			o := b.own[b.byKey["argocd/root"]]
			o.sources[0].Directory = nil
			delete(o.excluded, 0)
		}, "Application argocd/x is created by deployctl (app x) and rendered by app root's source 0 (directory apps) (through ApplicationSet set)"},
		{"a parent kept whole as an app", kustomizeRoot, func(b *builder) {
			delete(b.own, b.byKey["argocd/root"])
			b.byKey["argocd/root"].self = false
		}, "Application argocd/a is created by deployctl (app a) and rendered by app root's source 0 (kustomize build apps)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := builtTree(t, tc.files)
			// Correct as built.
			if _, err := b.render(nil); err != nil {
				t.Fatal(err)
			}
			tc.breakIt(b)
			b.res.Platform = nil
			if err := b.platform(); err != nil {
				t.Fatal(err)
			}
			b.nestedEdges()
			b.release()
			err := b.check()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "two managers") {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// christianh814/gitops-examples: a root whose source is a Kustomize folder
// listing its children (testdata/gitops-examples/SOURCE.md, facts written
// from the tree before importing).
func TestGitopsExamplesKustomizeRoot(t *testing.T) {
	r := importDir(t, "parent", "testdata/gitops-examples")
	want := []string{"pricelist-config@pricelist-app-wave-0", "pricelist-database@pricelist-app-wave-1", "pricelist-frontend@pricelist-app-wave-2"}
	if got := specApps(r); !reflect.DeepEqual(got, want) {
		t.Fatalf("apps %v, want %v", got, want)
	}
	checkArgoSemantics(t, r, node("pricelist-app", 0,
		node("pricelist-config", 0), node("pricelist-database", 1), node("pricelist-frontend", 2)))
	if n := stackDeps(r); n != 2 {
		t.Errorf("%d dependencies, want 2", n)
	}
	if len(r.Differences) != 0 {
		t.Errorf("lost %v", r.Differences)
	}
	if !hasNote(r, "argocd/pricelist-app (3)") {
		t.Errorf("the root is not named as a parent left out:\n%s", strings.Join(r.Notes, "\n"))
	}
}

// Imported alone, a root's file gives one app: the import says where its
// children are (iidi-tech: the root's folder is its source).
func TestRootAloneHint(t *testing.T) {
	dir := "testdata/iidi-tech/k8s/argocd/applications"
	r := importDir(t, "parent", dir+"/root.yaml")
	want := "argocd/root: its children in " + dir + " were not read (Application argocd-notifications, Application bc, " +
		"Application cert-manager, Application cert-manager-issuers, Application cnpg-system, Application demo-portal, …): " +
		"import the folder: deployctl import " + dir
	if !hasNote(r, want) {
		t.Errorf("no note %q in\n%s", want, strings.Join(r.Notes, "\n"))
	}
	// A root whose folder is beside it (gitops-examples): the folder that
	// holds both is the one to import.
	r = importDir(t, "parent", "testdata/gitops-examples/app-of-apps/pricelist-app.yaml")
	want = "argocd/pricelist-app: its children in testdata/gitops-examples/app-of-apps/apps were not read " +
		"(Application pricelist-config, Application pricelist-database, Application pricelist-frontend): " +
		"import the folder: deployctl import testdata/gitops-examples/app-of-apps"
	if !hasNote(r, want) {
		t.Errorf("no note %q in\n%s", want, strings.Join(r.Notes, "\n"))
	}
	// Read with its folder, no such note.
	r = importDir(t, "parent", "testdata/gitops-examples")
	if hasNote(r, "were not read") {
		t.Errorf("a note about unread children:\n%s", strings.Join(r.Notes, "\n"))
	}
}
