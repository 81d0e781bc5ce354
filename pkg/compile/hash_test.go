package compile

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// canonicalJSON, written app by app, is exactly json.Marshal of the whole:
// the spec hash (in every generated object's labels) does not change.
// Empty stacks and platforms without stacks too.
func TestCanonicalJSON(t *testing.T) {
	d, err := dag.Load("../../examples/reference-platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := canonical(d.Platform)
	noApps := *p
	noApps.Spec.Stacks = append([]spec.Stack{{Name: "empty", Apps: []spec.App{}}, {Name: "nil"}}, p.Spec.Stacks...)
	noStacks := *p
	noStacks.Spec.Stacks = nil
	for name, c := range map[string]*spec.Platform{"reference": p, "empty stacks": &noApps, "no stacks": &noStacks} {
		want, err := json.Marshal(struct {
			Scope    string
			Platform *spec.Platform
		}{"stack:x", c})
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := canonicalJSON(&got, "stack:x", c); err != nil {
			t.Fatal(err)
		}
		if got.String() != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got.String(), want)
		}
	}
}
