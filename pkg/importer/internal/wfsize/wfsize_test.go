package wfsize_test

import (
	"testing"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/importer"
	"github.com/deployctl/deployctl/pkg/importer/appdump"
	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/importer/internal/wfsize"
	"github.com/deployctl/deployctl/pkg/render"
	"github.com/deployctl/deployctl/pkg/spec"
)

// Sizes, fed the streamed compile of an imported spec, is exactly the size
// of each rendered WorkflowTemplate (the import's too-large note prints
// it): 1, 2, 3 and more tasks, with stacks (joins) and without.
func TestTemplateSize(t *testing.T) {
	for _, n := range []int{1, 2, 3, 120} {
		in := &appread.Input{}
		if err := in.Parse("dump.yaml", "dump", appdump.List(n, 5)); err != nil {
			t.Fatal(err)
		}
		for _, from := range []importer.StackFrom{{Kind: "label", Key: "team"}, {Kind: "parent"}} {
			r, err := importer.Import(in, importer.Options{Name: "p", StackFrom: from})
			if err != nil {
				t.Fatal(err)
			}
			sizes := wfsize.Sizes{}
			if _, err := compile.Stream(build(t, r.YAML), "platform", sizes.Visitor(nil)); err != nil {
				t.Fatal(err)
			}
			out, err := compile.Compile(build(t, r.YAML), "platform")
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range compile.Actions {
				data, err := render.Object(out.WorkflowTemplates[a])
				if err != nil {
					t.Fatal(err)
				}
				if size, ok := sizes[a].Known(); !ok || size != len(data) {
					t.Errorf("%d apps, %s, %s: size %+v, rendered %d bytes", n, from, a, sizes[a], len(data))
				}
			}
		}
	}
}

// build is the DAG of a spec, as `deployctl generate` builds it.
func build(t *testing.T, yml []byte) *dag.DAG {
	t.Helper()
	doc, err := spec.Load("p.yaml", yml)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dag.Build(doc)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
