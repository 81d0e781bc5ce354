package dag_test

import (
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
)

// TestRedundantIsCapped: a dense graph has thousands of redundant edges;
// the warnings list the first MaxWarnings in file order and count the rest.
func TestRedundantIsCapped(t *testing.T) {
	d, err := dag.Parse("dense.yaml", denseSpec(60, 30))
	if err != nil {
		t.Fatal(err)
	}
	w := d.Redundant()
	if len(w) != dag.MaxWarnings+1 {
		t.Fatalf("%d warnings, want %d and a count", len(w), dag.MaxWarnings+1)
	}
	for i := 1; i < dag.MaxWarnings; i++ {
		if w[i].Line < w[i-1].Line {
			t.Errorf("warning %d (line %d) before warning %d (line %d): not in file order", i, w[i].Line, i-1, w[i-1].Line)
		}
		if !strings.Contains(w[i].Msg, "redundant dependency") || !strings.Contains(w[i].Msg, "already implied by") {
			t.Errorf("warning %d: %s", i, w[i])
		}
	}
	last := w[len(w)-1]
	if last.File != "dense.yaml" || !strings.HasSuffix(last.Msg, "more redundant dependencies not listed (the first 50 are)") {
		t.Errorf("last warning %q", last.Error())
	}
}
