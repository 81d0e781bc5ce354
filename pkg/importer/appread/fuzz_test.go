package appread

import (
	"testing"

	"github.com/deployctl/deployctl/pkg/importer/appdump"
)

// FuzzRead feeds arbitrary bytes to the reader: a List read item by item
// must read as the whole document, and a problem reported must say where.
// The import's FuzzImport takes what the reader reads on to a spec. CI runs
// both for a bounded time (make fuzz).
func FuzzRead(f *testing.F) {
	seeds, err := appdump.Seeds("../testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		f.Add(s)
	}
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
