package importer

import (
	"testing"

	"github.com/deployctl/deployctl/pkg/importer/appdump"
	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/spec"
)

// FuzzImport feeds arbitrary bytes to the reader and the import: any input
// must end in a spec that loads or in an error, never in a panic, and a
// problem reported must say where (appread's FuzzRead: a List read item by
// item reads as the whole document). CI runs it for a bounded time (make
// fuzz).
func FuzzImport(f *testing.F) {
	seeds, err := appdump.Seeds("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Add(dump(3))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &appread.Input{}
		if err := in.Parse("fuzz.yaml", "fuzz", data); err != nil {
			if len(in.Problems) == 0 {
				t.Fatal("an error without a problem")
			}
			return
		}
		r, err := Import(in, Options{Name: "p", StackFrom: StackFrom{Kind: "parent"}, File: "fuzz-out.yaml"})
		if err != nil {
			return
		}
		if _, err := spec.Load("fuzz-out.yaml", r.YAML); err != nil {
			t.Fatalf("the written spec does not load: %v\n%s", err, r.YAML)
		}
	})
}
