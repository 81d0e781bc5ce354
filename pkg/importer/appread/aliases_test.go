package appread

import (
	"fmt"
	"strings"
	"testing"
)

// A List read item by item (stream.go) charges every item's aliases to one
// budget, the input's: twenty items adding 1,300 values each are refused,
// though each alone is within the bound.
func TestListItemsShareTheAliasBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "- apiVersion: argoproj.io/v1alpha1\n  kind: Application\n  metadata: {name: a%d, namespace: argocd}\n", i)
		b.WriteString("  spec:\n    project: default\n    source:\n      repoURL: https://example.com/r.git\n      path: p\n      helm:\n        valuesObject:\n")
		b.WriteString("          a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
		b.WriteString("          a1: &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]\n")
		b.WriteString("          a2: [*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1]\n")
		b.WriteString("    destination: {server: https://kubernetes.default.svc, namespace: web}\n")
	}
	in := &Input{}
	err := in.Parse("apps.yaml", "apps", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "YAML: alias expansion exceeds 10000 values") {
		t.Fatalf("got %v", err)
	}
	if len(in.Apps) != 0 {
		t.Errorf("%d Applications kept from a refused file", len(in.Apps))
	}
}
