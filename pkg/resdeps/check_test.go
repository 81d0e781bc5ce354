package resdeps

import (
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
)

// a → b → c declared; a's resource needs c: a → b orders it through b
// (deleting it would leave a before c), b → c orders nothing a resource
// needs, and nothing is missing. Without a → b, a → c is missing.
func TestCompare(t *testing.T) {
	spec := `apiVersion: deployctl.dev/v1alpha1
kind: Platform
metadata: {name: p}
spec:
  argocd: {namespace: argocd, server: argocd-server.argocd.svc:443}
  workflow: {namespace: argo, serviceAccount: deployctl, image: example.com/step:1}
  defaults:
    source: {repoURL: https://git.example.com/p.git, targetRevision: main, path: x}
  stacks:
  - name: s
    apps:
    - {name: a, dependsOn: [b]}
    - {name: b, dependsOn: [c]}
    - {name: c}
`
	d, err := dag.Parse("p.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	r := Infer([]App{app(t, "c", "", crdCert), app(t, "a", "x", "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c}\n"), {Name: "b"}})
	c := Compare(d, r, map[string]bool{"a": true, "b": true, "c": true})
	if len(c.Missing) != 0 || len(c.Declared) != 2 {
		t.Fatalf("%+v", c)
	}
	ab, bc := c.Declared[0], c.Declared[1]
	if ab.Supported() || len(ab.Through) != 1 || ab.Through[0].From != "a" || ab.Through[0].To != "c" {
		t.Errorf("a → b: %+v", ab)
	}
	if bc.Supported() || len(bc.Through) != 0 {
		t.Errorf("b → c: %+v", bc)
	}
	if ab.Origin != "spec.stacks[0].apps[0].dependsOn[0]" {
		t.Errorf("origin %q", ab.Origin)
	}

	d2, err := dag.Parse("p.yaml", []byte(spec[:len(spec)-len("    - {name: a, dependsOn: [b]}\n    - {name: b, dependsOn: [c]}\n    - {name: c}\n")]+
		"    - {name: a}\n    - {name: b, dependsOn: [c]}\n    - {name: c}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m := Compare(d2, r, map[string]bool{"a": true, "b": true, "c": true}).Missing; len(m) != 1 || m[0].From != "a" || m[0].To != "c" {
		t.Errorf("missing %+v", m)
	}
}
