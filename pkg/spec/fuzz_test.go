package spec_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/generate"
	"github.com/deployctl/deployctl/pkg/render"
	"github.com/deployctl/deployctl/pkg/spec"
)

// FuzzLoad feeds arbitrary bytes to the loader and the DAG builder: any
// input must end in a spec or in located errors, never in a panic. And
// whatever they accept (what lint and plan accept), generate compiles:
// every check generate makes on the spec is in the validation, with its
// line; the only refusal left to generate is the size of a compiled object
// (render.TooLargeError), which does not exist before compiling.
// CI runs it for a bounded time (make fuzz).
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("../../examples/*.yaml")
	invalid, _ := filepath.Glob("../../examples/invalid/*.yaml")
	for _, s := range append(seeds, invalid...) {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("a: &x [*x]"))
	f.Add([]byte("---\n---\n"))
	// The hardening classes: duplicate keys, bytes YAML refuses, nesting
	// past the parser's limit, durations past time.Duration.
	f.Add([]byte("metadata: {name: a}\nmetadata: {name: b}\n"))
	f.Add([]byte("a: \x00\n"))
	f.Add([]byte("a: caf\xe9\n"))
	f.Add([]byte("a: " + strings.Repeat("[", 10001)))
	f.Add([]byte(strings.Repeat("- ", 10001)))
	f.Add([]byte("spec: {defaults: {timeouts: {sync: 9999999999999h}}}\n"))
	f.Add([]byte("spec: {argocd: {project: \"a\\ng, x, role:admin\"}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := spec.Load("fuzz.yaml", data)
		if err != nil {
			if errs, ok := err.(spec.Errors); ok && len(errs) == 0 {
				t.Fatal("empty error list returned as an error")
			}
			return
		}
		d, err := dag.Build(doc)
		if err != nil {
			return
		}
		var size *render.TooLargeError
		if _, _, err := generate.Tree(d, "platform"); err != nil && !errors.As(err, &size) {
			t.Fatalf("lint accepted a spec generate refuses: %v", err)
		}
	})
}
