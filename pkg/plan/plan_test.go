package plan

import (
	"reflect"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
)

func TestTeardownDirection(t *testing.T) {
	// db ← api ← web, and cache with nothing on it: deploy starts with db
	// and cache; teardown starts with web and cache and ends with db.
	d, err := dag.Load("testdata/chain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		action       dag.Action
		layers       [][]string
		critical     []string
		order        string
		layersHeader string
	}{
		{dag.Deploy, [][]string{{"cache", "db"}, {"api"}, {"web"}}, []string{"db", "api", "web"}, "cache → db → api → web",
			"Layers (an app starts"},
		{dag.Teardown, [][]string{{"cache", "web"}, {"api"}, {"db"}}, []string{"web", "api", "db"}, "cache → web → api → db",
			"Layers, teardown direction"},
	} {
		p, err := Make(d, "", tc.action)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p.Layers, tc.layers) {
			t.Errorf("%s: layers %v, want %v", tc.action, p.Layers, tc.layers)
		}
		if !reflect.DeepEqual(p.CriticalPath, tc.critical) {
			t.Errorf("%s: critical path %v, want %v", tc.action, p.CriticalPath, tc.critical)
		}
		if p.Makespan.Duration().Minutes() != 15 {
			t.Errorf("%s: makespan %v", tc.action, p.Makespan.Duration())
		}
		var b strings.Builder
		if err := p.Write(&b, "text"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.layersHeader) || !strings.Contains(b.String(), "Teardown order:\n  cache → web → api → db\n") {
			t.Errorf("%s:\n%s", tc.action, b.String())
		}
		if got := strings.Join(p.Order, " → "); got != tc.order {
			t.Errorf("%s: order %s, want %s", tc.action, got, tc.order)
		}
	}
}
