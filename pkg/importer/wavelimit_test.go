package importer

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/importer/appdump"
	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/render"
)

// MaxWaveEdges rests on this: one dependency adds at least its name and
// ".Succeeded" to the generated deploy WorkflowTemplate. Measured on an
// imported spec with its one inferred dependency and without it.
func TestDependencyBytes(t *testing.T) {
	in := &appread.Input{}
	// 51 apps: app-00050 (team-0, wave 1) waits for app-00000 (team-0, wave 0).
	if err := in.Parse("dump.yaml", "dump", appdump.List(51, 2)); err != nil {
		t.Fatal(err)
	}
	r, err := Import(in, Options{Name: "p", StackFrom: StackFrom{Kind: "label", Key: "team"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Edges) != 1 || r.Edges[0].To != "app-00000" {
		t.Fatalf("edges %v, want app-00050 → app-00000", r.Edges)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(r.YAML, &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range doc["spec"].(map[string]any)["stacks"].([]any) {
		for _, a := range s.(map[string]any)["apps"].([]any) {
			if _, ok := a.(map[string]any)["dependsOn"]; ok {
				delete(a.(map[string]any), "dependsOn")
				found = true
			}
		}
	}
	without, err := yaml.Marshal(doc)
	if err != nil || !found {
		t.Fatalf("dependsOn found %v: %v", found, err)
	}
	deploySize := func(yml []byte) int {
		data, err := render.Object(compileWhole(t, yml).WorkflowTemplates[dag.Deploy])
		if err != nil {
			t.Fatal(err)
		}
		return len(data)
	}
	with, none := deploySize(r.YAML), deploySize(without)
	if got, least := with-none, len("app-00000")-len("x")+minDependencyBytes; got < least {
		t.Errorf("one dependency adds %d bytes to the deploy WorkflowTemplate, want at least %d", got, least)
	}
}

// Sync waves implying more dependencies inside stacks than MaxWaveEdges are
// refused before anything is built, naming the count, the limit and the way
// out; a hundred waves of two apps per team import.
func TestWaveLimit(t *testing.T) {
	label := StackFrom{Kind: "label", Key: "team"}
	in := &appread.Input{}
	if err := in.Parse("dump.yaml", "dump", appdump.List(10000, 5)); err != nil {
		t.Fatal(err)
	}
	_, err := Import(in, Options{Name: "p", StackFrom: label})
	want := "--stack-from label=team: the sync waves inside the stacks imply 320,000 dependencies " +
		"(every app waits for each app of the nearest lower wave in its stack; the most, 6,400, in stack team-0), " +
		"more than the limit of 95,325: each is at least 11 bytes of the deploy WorkflowTemplate, " +
		"which `deployctl generate` refuses over 1048576 bytes, so no spec with them could be generated; nothing was written. " +
		"Use --stack-from parent (each wave of a parent's children becomes a stack that waits for the wave before it), or split the input"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	in = &appread.Input{}
	if err := in.Parse("dump.yaml", "dump", appdump.List(10000, 100)); err != nil {
		t.Fatal(err)
	}
	r, err := Import(in, Options{Name: "p", StackFrom: label})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Edges) != 50*99*4 || !strings.Contains(string(r.YAML), "inferred from sync-wave") {
		t.Errorf("%d edges, want %d", len(r.Edges), 50*99*4)
	}
}
