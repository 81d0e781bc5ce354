package spec_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// FuzzLoad feeds arbitrary bytes to the loader and the DAG builder: any
// input must end in a spec or in located errors, never in a panic.
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
		if _, err := dag.Build(doc); err != nil {
			return
		}
	})
}
