package plan

import (
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/resdeps"
)

// ops (CRDs) ← db (a custom resource), in two stacks; web uses the CRD too
// but declares nothing (missing), cache declares db for no reason
// (unsupported), tools has no inventory (unchecked).
const edgesSpec = `apiVersion: deployctl.dev/v1alpha1
kind: Platform
metadata: {name: edges}
spec:
  argocd: {namespace: argocd, server: argocd-server.argocd.svc:443}
  workflow: {namespace: argo, serviceAccount: deployctl, image: example.com/step:1}
  defaults:
    source: {repoURL: https://git.example.com/p.git, targetRevision: main, path: x}
    syncOptions: [CreateNamespace=true]
  stacks:
  - name: operators
    apps:
    - {name: ops, destination: {namespace: ops}}
    - {name: tools, destination: {namespace: tools}}
  - name: data
    dependsOn: [operators]
    apps:
    - {name: db, destination: {namespace: data}}
    - {name: cache, dependsOn: [db], destination: {namespace: data}}
    - {name: web, destination: {namespace: web}}
  - name: late
    apps:
    - {name: web2, destination: {namespace: web}}
`

func inventory(t *testing.T, apps map[string]string) []resdeps.App {
	t.Helper()
	var out []resdeps.App
	for name, yml := range apps {
		objs, errs := resdeps.Parse(name+"/m.yaml", []byte(yml))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		out = append(out, resdeps.App{Name: name, Objects: objs})
	}
	return out
}

const (
	opsCRD = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: clusters.db.example.com}\nspec: {group: db.example.com, scope: Namespaced, names: {kind: Cluster, plural: clusters}}\n"
	dbCR   = "apiVersion: db.example.com/v1\nkind: Cluster\nmetadata: {name: main}\n"
)

func TestExplainEdges(t *testing.T) {
	d, err := dag.Parse("edges.yaml", []byte(edgesSpec))
	if err != nil {
		t.Fatal(err)
	}
	inv := inventory(t, map[string]string{"ops": opsCRD, "db": dbCR, "cache": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"web": dbCR, "web2": dbCR})
	apps, none, err := InventoryApps(d, "--manifests x", inv)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(none, ",") != "tools" {
		t.Errorf("no inventory: %v", none)
	}
	r := ExplainEdges(d, "--manifests x", apps, none)
	// db and web wait for ops through the stack edge data → operators: not
	// missing; web2's stack waits for nothing.
	if len(r.Missing) != 1 || r.Missing[0].From != "web2" || r.Missing[0].To != "ops" {
		t.Fatalf("missing: %+v", r.Missing)
	}
	if len(r.Unsupported) != 1 || r.Unsupported[0].Field != "spec.stacks[1].apps[1].dependsOn[0]" || r.Unsupported[0].Where != "edges.yaml:19" {
		t.Errorf("unsupported: %+v", r.Unsupported)
	}
	if len(r.Unchecked) != 1 || r.Unchecked[0].From != "data" || strings.Join(r.Unchecked[0].Unchecked, ",") != "tools" {
		t.Errorf("unchecked: %+v", r.Unchecked)
	}
	var b strings.Builder
	if err := r.Write(&b, "text"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"error: missing dependency web2 → ops: Cluster main at web2/m.yaml:1 needs CRD clusters.db.example.com from ops;",
		"info: edges.yaml:19: spec.stacks[1].apps[1].dependsOn[0]: cache → db: no resource needs it",
		"unchecked: edges.yaml:16: data → operators: no inventory for tools",
		"1 missing; 2 dependsOn entries: 0 a resource needs, 1 nothing needs, 1 not checked",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}

	if _, _, err := InventoryApps(d, "--manifests x", inventory(t, map[string]string{"opz": opsCRD})); err == nil ||
		!strings.Contains(err.Error(), "no app of the spec is named opz") {
		t.Errorf("err = %v", err)
	}
}

// The evidence DAG orders exactly what the resources show; a cycle among
// them is an error.
func TestEvidenceDAG(t *testing.T) {
	d, err := dag.Parse("edges.yaml", []byte(edgesSpec))
	if err != nil {
		t.Fatal(err)
	}
	apps, _, err := InventoryApps(d, "x", inventory(t, map[string]string{"ops": opsCRD, "web2": dbCR}))
	if err != nil {
		t.Fatal(err)
	}
	e, err := EvidenceDAG(d, apps)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(e.Graph.Deps("web2"), ","); got != "ops" {
		t.Errorf("web2 waits for %s", got)
	}
	if got := strings.Join(e.Graph.Deps("cache"), ","); got != "" {
		t.Errorf("cache waits for %s (its dependsOn should be gone)", got)
	}
	cyc := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.w.example.com}\nspec: {group: w.example.com, scope: Namespaced, names: {kind: Widget, plural: widgets}}\n"
	apps, _, _ = InventoryApps(d, "x", inventory(t, map[string]string{"ops": opsCRD + "---\napiVersion: w.example.com/v1\nkind: Widget\nmetadata: {name: w}\n", "web2": dbCR + "---\n" + cyc}))
	if _, err := EvidenceDAG(d, apps); err == nil || !strings.Contains(err.Error(), "make a cycle") {
		t.Errorf("err = %v", err)
	}
}
