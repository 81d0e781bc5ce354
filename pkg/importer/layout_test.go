package importer

import (
	"bytes"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/generate"
	"github.com/deployctl/deployctl/pkg/importer/appread"
)

// tree is an app-of-apps as Argo CD runs it, written by hand from reading
// a fixture: an Application with its wave inside its parent, its children,
// and own: it deploys resources besides its children (then it is an app),
// whose waves span lo…hi.
type tree struct {
	name   string
	wave   int
	own    bool
	lo, hi int
	kids   []tree
}

func node(name string, wave int, kids ...tree) tree { return tree{name: name, wave: wave, kids: kids} }

// withOwn marks a parent that deploys resources besides its children, in
// waves lo to hi.
func withOwn(lo, hi int, n tree) tree { n.own, n.lo, n.hi = true, lo, hi; return n }

// branch is one step from a parent to a member of its sync: a child with
// its wave, or the parent's own resources (self) with theirs.
type branch struct {
	name   string
	wave   int
	self   bool
	lo, hi int
}

// paths lists every app the spec must have, each with its steps from the
// top: leaves, and parents with resources of their own.
func (n tree) paths(prefix []branch, out map[string][]branch) {
	here := append(append([]branch(nil), prefix...), branch{name: n.name, wave: n.wave})
	if len(n.kids) == 0 {
		out[n.name] = here
		return
	}
	if n.own {
		out[n.name] = append(append([]branch(nil), here...), branch{name: n.name, self: true, lo: n.lo, hi: n.hi})
	}
	for _, k := range n.kids {
		k.paths(here, out)
	}
}

// argoOrder is what Argo CD's nested waves say about x and y: +1 when y
// waits for x, -1 when x waits for y, 0 when neither. Where their paths
// part (under one parent), the lower wave goes first, and all below it
// with it; a parent's own resources span their waves, and are ordered
// only against the children of waves outside them.
func argoOrder(x, y []branch) int {
	i := 0
	for i < len(x) && i < len(y) && x[i] == y[i] {
		i++
	}
	if i == len(x) || i == len(y) {
		return 0
	}
	span := func(b branch) (int, int) {
		if b.self {
			return b.lo, b.hi
		}
		return b.wave, b.wave
	}
	xlo, xhi := span(x[i])
	ylo, yhi := span(y[i])
	switch {
	case xhi < ylo:
		return 1
	case yhi < xlo:
		return -1
	}
	return 0
}

// checkArgoSemantics asserts that the imported spec orders every pair of
// apps exactly as Argo CD's nested waves do (no more, no less), that its
// apps are the tree's, and that it passes lint (no redundant edge) and
// generate.
func checkArgoSemantics(t *testing.T, r *Result, roots ...tree) *dag.DAG {
	t.Helper()
	want := map[string][]branch{}
	for _, root := range roots {
		root.paths(nil, want)
	}
	d := writeAndLoad(t, r)
	var names []string
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	if got := d.Apps(); !reflect.DeepEqual(sortedCopy(got), names) {
		t.Fatalf("apps %v, want %v", sortedCopy(got), names)
	}
	waits := map[string]map[string]bool{}
	for _, a := range names {
		waits[a] = map[string]bool{}
		for _, dep := range d.Graph.DepsClosure(a) {
			waits[a][dep] = true
		}
	}
	bad := 0
	for _, x := range names {
		for _, y := range names {
			if x >= y {
				continue
			}
			want := argoOrder(want[x], want[y])
			got := 0
			switch {
			case waits[y][x] && waits[x][y]:
				got = 2
			case waits[y][x]:
				got = 1
			case waits[x][y]:
				got = -1
			}
			if got != want && bad < 20 {
				bad++
				t.Errorf("%s, %s: order %d, Argo CD's %d (+1: %s waits for %s)", x, y, got, want, y, x)
			}
		}
	}
	if red := d.Redundant(); len(red) > 0 {
		t.Errorf("lint: %v", red)
	}
	if _, _, err := generate.Tree(d, "platform"); err != nil {
		t.Errorf("generate: %v", err)
	}
	return d
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func stackDeps(r *Result) int {
	n := 0
	for _, s := range r.Platform.Spec.Stacks {
		n += len(s.DependsOn)
		for _, a := range s.Apps {
			n += len(a.DependsOn)
		}
	}
	return n
}

// kubefirst gitops-template (civo-github/templates/mgmt as kubefirst
// renders it into registry/clusters/mgmt): read from the tree by hand. The
// root registry points at its own folder, which also holds
// ClusterRoleBindings; each *-components parent points at a components/
// folder holding the chart's Application and, mostly, resources of its own
// (ExternalSecrets, wait Jobs). argo-components' vault-wait (wave 0) waits
// for a certificate that vault and cert-manager create.
//
// The own resources' waves, read from the files (no annotation is 0):
// registry's ClusterRoleBindings 0; the wait.yaml files: ServiceAccount,
// Role and RoleBinding 0, their Jobs 20 (vault's also 21); the
// ExternalSecrets and issuers 0; crossplane-system's ExternalSecrets 0.
var kubefirstTree = withOwn(0, 0, node("registry", 1001,
	node("cert-manager-components", 10, node("cert-manager", 10)),
	withOwn(0, 20, node("external-dns-components", 10, node("external-dns", 10))),
	withOwn(0, 20, node("ingress-nginx-components", 10, node("ingress-nginx", 10))),
	node("cert-issuers", 20),
	withOwn(0, 21, node("vault-components", 20, node("vault", 10))),
	withOwn(0, 20, node("external-secrets-operator-components", 30, node("external-secrets-operator", 10))),
	node("cluster-secret-store", 40),
	withOwn(0, 20, node("argo-components", 50, node("vault-wait", 0), node("argo", 10), node("argo-cwfts", 30))),
	node("crossplane-components", 60,
		withOwn(0, 0, node("crossplane-system", 10, node("crossplane", 10))),
		node("crossplane-provider", 20)),
	withOwn(0, 20, node("reloader-components", 60, node("reloader", 10))),
))

func TestKubefirstLayout(t *testing.T) {
	r := importDir(t, "parent", "testdata/kubefirst")
	d := checkArgoSemantics(t, r, kubefirstTree)

	// The deploy that could never finish: vault waited for vault-wait.
	waits := map[string]bool{}
	for _, n := range d.Graph.DepsClosure("vault") {
		waits[n] = true
	}
	for _, n := range []string{"vault-wait", "argo", "argo-cwfts", "argo-components"} {
		if waits[n] {
			t.Errorf("vault waits for %s, a child of a higher wave of the root", n)
		}
	}
	for _, child := range []string{"vault-wait", "argo", "argo-cwfts"} {
		deps := map[string]bool{}
		for _, n := range d.Graph.DepsClosure(child) {
			deps[n] = true
		}
		for _, n := range []string{"vault", "cert-manager", "cluster-secret-store", "external-secrets-operator"} {
			if !deps[n] {
				t.Errorf("%s (under argo-components, wave 50) does not wait for %s", child, n)
			}
		}
	}
	// A parent that also deploys resources keeps them, without the
	// children's files: its Application would create them again.
	src := map[string]string{}
	for _, s := range r.Platform.Spec.Stacks {
		for _, a := range s.Apps {
			if a.Source != nil && a.Source.Directory != nil {
				src[a.Name] = a.Source.Directory.Exclude
			}
		}
	}
	for app, exclude := range map[string]string{
		"registry":                             "{argo-workflows.yaml,cert-issuers.yaml,cert-manager.yaml,cluster-secret-store.yaml,crossplane.yaml,external-dns.yaml,external-secrets-operator.yaml,ingress-nginx.yaml,registry.yaml,reloader.yaml,vault.yaml}",
		"argo-components":                      "{application.yaml,argo-workflows-cwfts.yaml,vault-wait.yaml}",
		"vault-components":                     "application.yaml",
		"crossplane-system":                    "crossplane-system.yaml",
		"external-secrets-operator-components": "external-secrets-operator.yaml", // Application and ClusterRoleBinding in one file
	} {
		if src[app] != exclude {
			t.Errorf("%s: exclude %q, want %q", app, src[app], exclude)
		}
	}
	if !hasNote(r, "external-secrets-operator-components: files that hold Applications and other objects") {
		t.Errorf("notes %v", r.Notes)
	}
	if len(r.Differences) != 0 { // syncPolicy.retry on three apps is now a spec field: exact
		t.Errorf("differences %v", r.Differences)
	}
	// 61 all-pairs app edges before (everything in one stack "ungrouped").
	if n := stackDeps(r); n != 21 {
		t.Errorf("%d dependsOn entries", n)
	}
}

// utkarsh-homelab/homelab-gitops: infra-root (no wave) is a directory
// source on its own folder infra-apps, which holds nothing but it and six
// Helm Applications of another repository.
var homelabTree = node("infra-root", 0,
	node("argocd", -2), node("metallb", -1), node("cert-manager", 0), node("traefik", 0),
	node("csi-driver-nfs", 1), node("kube-prometheus-stack", 1))

func TestHomelabLayout(t *testing.T) {
	r := importDir(t, "parent", "testdata/homelab")
	checkArgoSemantics(t, r, homelabTree) // the root is not an app
	if !hasNote(r, "parents found by git layout 6") || !hasNote(r, "app-of-apps parents left out") {
		t.Errorf("notes %v", r.Notes)
	}
	// 10 app edges before: the root was an app of wave 0 (no annotation),
	// 1×1 + 1×3 + 3×2.
	if n := stackDeps(r); n != 3 {
		t.Errorf("%d dependsOn entries, want 3 (one per wave after the first)", n)
	}
}

// The same Applications as a cluster dump, under each of Argo CD's
// tracking methods: the same platform, found by that method alone.
func TestTrackingMethods(t *testing.T) {
	var first []byte
	for dir, by := range map[string]string{
		"testdata/tracking-label":         "argocd.argoproj.io/instance",
		"testdata/tracking-default-label": "app.kubernetes.io/instance",
		"testdata/tracking-annotation":    "argocd.argoproj.io/tracking-id",
	} {
		r := importDir(t, "parent", dir)
		checkArgoSemantics(t, r, homelabTree)
		if !hasNote(r, "parents found by "+by+" 6") {
			t.Errorf("%s: notes %v", dir, r.Notes)
		}
		body := r.YAML[bytes.Index(r.YAML, []byte("\napiVersion:")):]
		if first == nil {
			first = body
		} else if string(first) != string(body) {
			t.Errorf("%s: another spec than the other tracking methods", dir)
		}
	}
}

// andres20980/dotfiles argo-config: the root argocd-self-config has four
// directory sources; "applications" holds it, nine Applications and two
// ApplicationSets; "projects", "repositories" and "configmaps" hold
// AppProjects, repository Secrets and Argo CD's ConfigMaps. No waves.
func TestMultiSourceRoot(t *testing.T) {
	r := importDir(t, "parent", "testdata/multisource-root")
	// AppProjects, Secrets, ConfigMaps, ApplicationSets: no waves (0).
	root := withOwn(0, 0, node("argocd-self-config", 0,
		node("dashboard", 0), node("grafana", 0), node("prometheus", 0), node("kargo", 0), node("argo-rollouts", 0),
		node("gitea", 0), node("argo-workflows", 0), node("registry", 0), node("redis", 0)))
	checkArgoSemantics(t, r, root)
	var self *struct{ paths, exclude []string }
	for _, s := range r.Platform.Spec.Stacks {
		for _, a := range s.Apps {
			if a.Name != "argocd-self-config" {
				continue
			}
			self = &struct{ paths, exclude []string }{}
			for _, src := range a.Sources {
				self.paths = append(self.paths, src.Path)
				ex := ""
				if src.Directory != nil {
					ex = src.Directory.Exclude
				}
				self.exclude = append(self.exclude, ex)
			}
		}
	}
	// Its own resources stay: every source, the ApplicationSets included;
	// the files of nothing but Applications (its children, itself) go.
	want := &struct{ paths, exclude []string }{
		paths:   []string{"projects", "applications", "repositories", "configmaps"},
		exclude: []string{"", "{argo-self-management.yaml,gitops-tools-with-ui.yaml}", "", ""},
	}
	if !reflect.DeepEqual(self, want) {
		t.Errorf("the root's own app: %+v, want %+v", self, want)
	}
	if n := stackDeps(r); n != 0 {
		t.Errorf("%d dependsOn entries: nothing has a wave", n)
	}
	for _, d := range r.Differences {
		if d.App == "argocd-self-config" && d.Field != "spec.syncPolicy.syncOptions" && !strings.HasPrefix(d.Field, "spec.ignoreDifferences") {
			t.Errorf("difference %v: the children's files left out are not a difference", d)
		}
	}
}

// The Git layout and the nested waves do not depend on the order files
// are read in.
func TestLayoutDeterministic(t *testing.T) {
	a := importDir(t, "parent", "testdata/kubefirst")
	in, err := appread.Read([]string{"testdata/kubefirst"})
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(in.Apps)-1; i < j; i, j = i+1, j-1 {
		in.Apps[i], in.Apps[j] = in.Apps[j], in.Apps[i]
	}
	in.Apps = append(in.Apps[5:], in.Apps[:5]...)
	b, err := Import(in, Options{Name: "reference-platform", StackFrom: StackFrom{Kind: "parent"}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.YAML, b.YAML) {
		t.Error("another input order gives another spec")
	}
}

// The RFC platform as an app-of-apps (testdata/rfc, tracked by label):
// waves read from its manifests, none written is 0.
var rfcTree = node("platform", 0,
	node("foundation", -30, node("cert-manager", -10), node("metallb", -10),
		node("cert-manager-issuers", 0), node("metallb-config", 0), node("sealed-secrets", 0)),
	node("storage-operators", -20, node("ceph-operator", 0), node("postgres-operator", 0), node("redis-operator", 0)),
	node("networking", -20, node("external-dns", 0), node("ingress-nginx", 0)),
	node("storage", -10, node("ceph-cluster", 0), node("ceph-storageclasses", 10)),
	node("monitoring", 0, node("prometheus-operator-crds", -20), node("prometheus", -10),
		node("grafana", 0), node("loki", 0), node("tempo", 0)),
	node("platform-data", 10, node("backstage-postgres", 0), node("harbor-postgres", 0), node("keycloak-postgres", 0),
		node("temporal-postgres", 0), node("redis-cluster", 5)),
	node("data-streaming", 10, node("strimzi-operator", -10), node("kafka-cluster", 0)),
	node("security", 20, node("kyverno", -10), node("vault", -10), node("external-secrets", -5),
		node("external-secrets-stores", 0), node("falco", 0), node("kyverno-policies", 0), node("keycloak", 10)),
	node("development-workloads", 30, node("argo-rollouts", -10), node("kargo", 0)),
	node("developer-platform", 40, node("kubevirt-operator", -10), node("tekton-pipelines", -10),
		node("backstage", 0), node("harbor", 0), node("kubevirt", 0), node("tekton-triggers", 0)),
	node("application-infrastructure", 50, node("temporal", 0), node("temporal-ui", 10)),
)

func TestRFCArgoSemantics(t *testing.T) {
	checkArgoSemantics(t, importDir(t, "parent", "testdata/rfc"), rfcTree)
}
