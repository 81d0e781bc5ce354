package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/spec"
)

// FuzzImport feeds arbitrary bytes to the reader and the import: any input
// must end in a spec that loads or in an error, never in a panic, and a
// problem reported must say where (appread's FuzzRead: a List read item by
// item reads as the whole document). CI runs it for a bounded time (make
// fuzz).
func FuzzImport(f *testing.F) {
	var seeds []string
	_ = filepath.WalkDir("testdata", func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && isManifest(p) {
			seeds = append(seeds, p)
		}
		return nil
	})
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("kind: List\nitems: [3, {kind: Application}]\n"))
	f.Add([]byte("a: &x [*x]"))
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

// isManifest is what the reader reads in a folder: the seeds.
func isManifest(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}
