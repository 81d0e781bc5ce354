package importer

import (
	"fmt"

	"github.com/deployctl/deployctl/pkg/importer/internal/words"
	"github.com/deployctl/deployctl/pkg/render"
)

// MaxWaveEdges bounds the dependencies sync waves may imply inside stacks
// (--stack-from label, annotation or folder: every app waits for each app of
// the nearest lower wave in its stack). Each such dependency is written into
// the deploy WorkflowTemplate as "NAME.Succeeded" in its task's depends
// expression: at least minDependencyBytes with the shortest name (one
// character; the " && " between them and the YAML around come on top), and
// `deployctl generate` refuses any object over render.MaxObjectBytes. A spec
// with more dependencies than this could never be generated, so the import
// refuses it early instead of building, checking and writing it.
const MaxWaveEdges = render.MaxObjectBytes / minDependencyBytes

// minDependencyBytes is the least one dependency adds to the deploy
// WorkflowTemplate: len("x.Succeeded") (TestDependencyBytes measures it).
const minDependencyBytes = len("x") + len(".Succeeded")

// waveLimit refuses n wave edges inside stacks when they are more than
// MaxWaveEdges, naming the stack with the most.
func (b *builder) waveLimit(n int, byWave []map[int][]string) error {
	if n <= MaxWaveEdges {
		return nil
	}
	most, mostAt := 0, 0
	for i, waves := range byWave {
		edges := 0
		for w, names := range waves {
			if lower, ok := below(waves, w); ok {
				edges += len(names) * len(waves[lower])
			}
		}
		if edges > most {
			most, mostAt = edges, i
		}
	}
	flag := b.o.StackFrom.Kind
	if b.o.StackFrom.Key != "" {
		flag += "=" + b.o.StackFrom.Key
	}
	return fmt.Errorf("--stack-from %s: the sync waves inside the stacks imply %s "+
		"(every app waits for each app of the nearest lower wave in its stack; the most, %s, in stack %s), "+
		"more than the limit of %s: each is at least %d bytes of the deploy WorkflowTemplate, "+
		"which `deployctl generate` refuses over %d bytes, so no spec with them could be generated; nothing was written. "+
		"Use --stack-from parent (each wave of a parent's children becomes a stack that waits for the wave before it), "+
		"or split the input",
		flag, words.Thousands(n)+" dependencies", words.Thousands(most), b.res.Platform.Spec.Stacks[mostAt].Name,
		words.Thousands(MaxWaveEdges), minDependencyBytes, render.MaxObjectBytes)
}
