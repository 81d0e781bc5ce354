package appread

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/deployctl/deployctl/pkg/importer/appdump"
)

// FuzzRead feeds arbitrary bytes to the reader: a List read item by item
// must read as the whole document, and a problem reported must say where.
// The import's FuzzImport takes what the reader reads on to a spec. CI runs
// both for a bounded time (make fuzz).
func FuzzRead(f *testing.F) {
	var seeds []string
	_ = filepath.WalkDir("../testdata", func(p string, e os.DirEntry, err error) error {
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
	f.Add(appdump.List(3, 5))
	f.Fuzz(func(t *testing.T, data []byte) {
		// A List read item by item reads as the whole document does.
		if streamed := (&Input{}); streamed.parseList("fuzz.yaml", "fuzz", data) {
			whole := &Input{}
			whole.parseDocuments("fuzz.yaml", "fuzz", data)
			sameInput(t, streamed, whole)
		}
		in := &Input{}
		if err := in.Parse("fuzz.yaml", "fuzz", data); err != nil && len(in.Problems) == 0 {
			t.Fatal("an error without a problem")
		}
	})
}
