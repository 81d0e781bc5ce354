package importer

import (
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/importer/appdump"
	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/spec"
)

// dump is appdump.List(n, 5): 50 team stacks, five waves in each.
func dump(n int) []byte { return appdump.List(n, 5) }

// BenchmarkImport10000 imports 10,000 Applications (8 MB): read, build,
// load, compile and compare, size check; with stacks from parents (the
// default; five waves a team) and from a label (a hundred waves of two apps
// a team: 19,800 dependencies inferred; five waves of 40 would be 320,000,
// over MaxWaveEdges), in this process (time and allocations;
// BenchmarkImportRSS measures the CLI's peak memory on the same dumps).
func BenchmarkImport10000(b *testing.B) {
	for _, from := range []StackFrom{{Kind: "label", Key: "team"}, {Kind: "parent"}} {
		data := dump(10000)
		if from.Kind == "label" {
			data = appdump.List(10000, 100)
		}
		b.Run(from.String(), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				in := &appread.Input{}
				if err := in.Parse("dump.yaml", "dump", data); err != nil {
					b.Fatal(err)
				}
				if _, err := Import(in, Options{Name: "p", StackFrom: from}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A spec whose deploy workflow `deployctl generate` would refuse (over
// render.MaxObjectBytes) is still written, with a note saying so and why.
func TestTooLargeNoted(t *testing.T) {
	in := &appread.Input{}
	if err := in.Parse("dump.yaml", "dump", dump(3000)); err != nil {
		t.Fatal(err)
	}
	r, err := Import(in, Options{Name: "p", StackFrom: StackFrom{Kind: "label", Key: "team"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "`deployctl generate` will refuse this spec as it is: workflow-templates/deploy.yaml would be "
	for _, n := range r.Notes {
		if strings.HasPrefix(n, want) && strings.HasSuffix(n, "the scope has 3000 apps; split the platform into several platform specs with their own workflows, or generate per stack with --scope stack:NAME") {
			return
		}
	}
	t.Errorf("no note %q…:\n%s", want, strings.Join(r.Notes, "\n"))
}

// compileWhole is compile.Compile of a spec: everything generate makes.
func compileWhole(t *testing.T, yml []byte) *compile.Output {
	t.Helper()
	doc, err := spec.Load("p.yaml", yml)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dag.Build(doc)
	if err != nil {
		t.Fatal(err)
	}
	out, err := compile.Compile(d, "platform")
	if err != nil {
		t.Fatal(err)
	}
	return out
}
