package importer

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/deployctl/deployctl/pkg/importer/appdiff"
	"github.com/deployctl/deployctl/pkg/importer/internal/words"
	"github.com/deployctl/deployctl/pkg/importer/internal/yamlnode"
	"github.com/deployctl/deployctl/pkg/spec"
)

// render writes the spec as YAML a person maintains: the usual field order
// (the spec types'), small maps on one line, every inferred edge with its
// comment, and above each app what its generated Application would not
// reproduce.
func (b *builder) render(diffs map[string][]appdiff.Difference) ([]byte, error) {
	// The document without its stacks; each stack is made into YAML nodes
	// only while it is written (encodeByStack).
	skel := *b.res.Platform
	skel.Spec.Stacks = []spec.Stack{}
	root, err := yamlnode.Nodes(&skel)
	if err != nil {
		return nil, err
	}
	doc := root.Content[0]
	yamlnode.Style(doc, "")
	specNode := yamlnode.Get(doc, "spec")
	for _, empty := range []struct {
		parent *yaml.Node
		key    string
	}{{specNode, "defaults"}, {specNode, "healthOptions"}, {yamlnode.Get(specNode, "argocd"), "tokenSecret"}} {
		if v := yamlnode.Get(empty.parent, empty.key); v != nil && len(v.Content) == 0 {
			yamlnode.Remove(empty.parent, empty.key)
		}
	}
	root.HeadComment = b.header()

	// from → its edges (indices in b.res.Edges); stacks keyed "stack "+name.
	edges := map[string][]int{}
	for i, e := range b.res.Edges {
		from := e.From
		if e.Stack {
			from = "stack " + from
		}
		edges[from] = append(edges[from], i)
	}
	comment := func(from string, deps *yaml.Node) {
		if deps == nil {
			return
		}
		to := map[string]Edge{}
		for _, i := range edges[from] {
			to[b.res.Edges[i].To] = b.res.Edges[i]
		}
		for _, d := range deps.Content {
			if e, ok := to[d.Value]; ok {
				d.LineComment = "# " + e.Comment()
			}
		}
	}
	app := func(a *spec.App) ([]byte, error) {
		n, err := yamlnode.Nodes(a)
		if err != nil {
			return nil, err
		}
		app := n.Content[0]
		yamlnode.Style(app, "") // as an item of the apps list
		name := yamlnode.Get(app, "name").Value
		comment(name, yamlnode.Get(app, "dependsOn"))
		if b.emptySyncOptions[name] {
			yamlnode.InsertAfter(app, []string{"destination", "sources", "source", "name"}, "syncOptions",
				&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle})
		}
		if d := diffs[name]; len(d) > 0 {
			lines := []string{"not reproduced by the generated Application (the spec cannot express it):"}
			for _, x := range d {
				lines = append(lines, "  "+x.String())
			}
			app.HeadComment = strings.Join(lines, "\n")
		}
		return yamlnode.Encode(yamlnode.Item(app))
	}
	stack := func(i int) ([]byte, error) {
		s := b.res.Platform.Spec.Stacks[i]
		apps := s.Apps
		s.Apps = []spec.App{}
		n, err := yamlnode.Nodes(&s)
		if err != nil {
			return nil, err
		}
		st := n.Content[0]
		yamlnode.Style(st, "") // as an item of the stacks list
		comment("stack "+s.Name, yamlnode.Get(st, "dependsOn"))
		return yamlnode.EncodeSpliced(yamlnode.Item(st), yamlnode.Get(st, "apps"), len(apps), func(j int) ([]byte, error) { return app(&apps[j]) })
	}
	return yamlnode.EncodeSpliced(root, yamlnode.Get(specNode, "stacks"), len(b.res.Platform.Spec.Stacks), stack)
}

func (b *builder) header() string {
	n := len(b.res.Sources)
	lines := []string{
		fmt.Sprintf("Imported by `deployctl import` from %d Argo CD Applications (stacks from %s).", n, b.o.StackFrom),
	}
	if len(b.res.Edges) > 0 {
		lines = append(lines, b.inferenceLines()...)
	}
	if r := b.res.Resources; r != nil {
		lines = append(lines, b.resourceLines(r)...)
	}
	lines = append(lines,
		"The original waves stay in the annotations deployctl.dev/sync-wave and",
		"deployctl.dev/sync-wave-path: `deployctl plan --compare-waves` uses them.")
	if len(b.res.Differences) > 0 {
		apps := map[string]bool{}
		for _, d := range b.res.Differences {
			apps[d.App] = true
		}
		lines = append(lines, fmt.Sprintf("%s with fields the spec cannot express: see the comment above each.", words.Plural(len(apps), "app")))
	}
	for _, note := range b.res.Notes {
		lines = append(lines, words.Wrap("Note: "+note, 86)...)
	}
	return strings.Join(lines, "\n")
}
