package resdeps

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any bytes give objects or located errors, never a panic, and
// the rules take whatever Parse returns: the --manifests reader, in
// `make fuzz`.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/charts/*/*")
	bombs, _ := filepath.Glob("testdata/alias-bomb/*/*") // refused before expansion, fast
	files = append(files, bombs...)
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Namespace, metadata: {name: x}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, _ := Parse("f.yaml", data)
		for _, o := range objs {
			if o.Kind() == "" || o.APIVersion() == "" {
				t.Fatalf("object without kind or apiVersion: %v", o.Obj)
			}
		}
		Infer([]App{{Name: "a", Namespace: "ns", Objects: objs}, {Name: "b", Objects: objs}})
	})
}
