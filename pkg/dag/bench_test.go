package dag_test

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/generate"
	"github.com/deployctl/deployctl/pkg/render"
	"github.com/deployctl/deployctl/pkg/spec"
)

// denseSpec is a platform of n apps in stacks of ten where app i depends on
// up to perApp apps chosen among the 3·perApp apps before it (500 apps, 112 each: about 50,000 edges): a dense DAG
// in which most edges are implied by others (the redundant-edge warning's
// worst case). Deterministic.
func denseSpec(n, perApp int) []byte {
	rng := rand.New(rand.NewSource(int64(n)))
	var b strings.Builder
	b.WriteString(`apiVersion: deployctl.dev/v1alpha1
kind: Platform
metadata: {name: dense}
spec:
  argocd: {namespace: argocd, server: argocd-server.argocd.svc:443}
  workflow: {namespace: argo, serviceAccount: deployctl, image: example.com/deploystep:1}
  defaults:
    source: {repoURL: https://git.example.com/p.git, targetRevision: main}
  stacks:
`)
	for i := 0; i < n; i++ {
		if i%10 == 0 {
			fmt.Fprintf(&b, "  - name: s%03d\n    apps:\n", i/10)
		}
		fmt.Fprintf(&b, "    - name: a%04d\n      source: {path: apps/a%04d}\n", i, i)
		k := min(i, perApp)
		if k == 0 {
			continue
		}
		window := min(i, 3*perApp)
		b.WriteString("      dependsOn: [")
		for j, d := range rng.Perm(window)[:k] {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "a%04d", i-1-d)
		}
		b.WriteString("]\n")
	}
	return []byte(b.String())
}

// BenchmarkLintVsGenerate compares what `deployctl lint` does (load, every
// check, the DAG, the redundant-edge warnings) with what `deployctl
// generate` does (load, every check, the DAG, compile and render) on the
// same dense spec. Lint must stay within a small factor of generate, and
// both must grow about linearly with the number of edges.
func BenchmarkLintVsGenerate(b *testing.B) {
	for _, n := range []int{100, 200, 500} {
		data := denseSpec(n, 112)
		d, err := dag.Parse("dense.yaml", data)
		if err != nil {
			b.Fatal(err)
		}
		edges := d.Graph.EdgeCount()
		b.Run(fmt.Sprintf("apps=%d,edges=%d/lint", n, edges), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				d, err := dag.Parse("dense.yaml", data)
				if err != nil {
					b.Fatal(err)
				}
				if w := d.Redundant(); len(w) == 0 {
					b.Fatal("no redundant-edge warnings on a dense graph")
				}
			}
		})
		b.Run(fmt.Sprintf("apps=%d,edges=%d/generate", n, edges), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				d, err := dag.Parse("dense.yaml", data)
				if err != nil {
					b.Fatal(err)
				}
				// Past render.MaxObjectBytes generate refuses, after
				// compiling and rendering everything: the same work.
				var size *render.TooLargeError
				if _, _, err := generate.Tree(d, "platform"); err != nil && !errors.As(err, &size) {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLintManyErrors is a careless (or hostile) dense spec in which
// almost every dependency is misspelled: tens of thousands of located
// errors in one pass must cost about what a valid spec does, not the
// square of it.
func BenchmarkLintManyErrors(b *testing.B) {
	data := []byte(strings.ReplaceAll(string(denseSpec(500, 112)), ", a", ", z"))
	for b.Loop() {
		_, err := dag.Parse("dense.yaml", data)
		var errs spec.Errors
		if !errors.As(err, &errs) || len(errs) < 40000 {
			b.Fatalf("want tens of thousands of errors, got %d", len(errs))
		}
	}
}
