package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/deployctl/deployctl/pkg/spec"
)

// render writes the spec as YAML a person maintains: the usual field order
// (the spec types'), small maps on one line, every inferred edge with its
// comment, and above each app what its generated Application would not
// reproduce.
func (b *builder) render(diffs map[string][]Difference) ([]byte, error) {
	// The document without its stacks; each stack is made into YAML nodes
	// only while it is written (encodeByStack).
	skel := *b.res.Platform
	skel.Spec.Stacks = []spec.Stack{}
	root, err := nodes(&skel)
	if err != nil {
		return nil, err
	}
	doc := root.Content[0]
	style(doc, "")
	specNode := get(doc, "spec")
	for _, empty := range []struct {
		parent *yaml.Node
		key    string
	}{{specNode, "defaults"}, {specNode, "healthOptions"}, {get(specNode, "argocd"), "tokenSecret"}} {
		if v := get(empty.parent, empty.key); v != nil && len(v.Content) == 0 {
			remove(empty.parent, empty.key)
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
		n, err := nodes(a)
		if err != nil {
			return nil, err
		}
		app := n.Content[0]
		style(app, "") // as an item of the apps list
		name := get(app, "name").Value
		comment(name, get(app, "dependsOn"))
		if b.emptySyncOptions[name] {
			insertAfter(app, []string{"destination", "sources", "source", "name"}, "syncOptions",
				&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle})
		}
		if d := diffs[name]; len(d) > 0 {
			lines := []string{"not reproduced by the generated Application (the spec cannot express it):"}
			for _, x := range d {
				lines = append(lines, "  "+x.String())
			}
			app.HeadComment = strings.Join(lines, "\n")
		}
		return encode(item(app))
	}
	stack := func(i int) ([]byte, error) {
		s := b.res.Platform.Spec.Stacks[i]
		apps := s.Apps
		s.Apps = []spec.App{}
		n, err := nodes(&s)
		if err != nil {
			return nil, err
		}
		st := n.Content[0]
		style(st, "") // as an item of the stacks list
		comment("stack "+s.Name, get(st, "dependsOn"))
		return encodeSpliced(item(st), get(st, "apps"), len(apps), func(j int) ([]byte, error) { return app(&apps[j]) })
	}
	return encodeSpliced(root, get(specNode, "stacks"), len(b.res.Platform.Spec.Stacks), stack)
}

// item is n as the one item of a block sequence.
func item(n *yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{n}}
}

// nodes is v as YAML nodes, through JSON: the spec types' field order.
func nodes(v any) (*yaml.Node, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil {
		return nil, err
	}
	return &root, nil
}

// listPlaceholder stands for a list's items while the rest is encoded.
const listPlaceholder = "deployctl-import-list-placeholder-9f2c41"

// encodeSpliced encodes root as yaml.v3 would in one go, but the n items of
// its block sequence list one by one: the encoder keeps every event of a
// document until it ends, and the nodes of 10,000 apps are hundreds of MB;
// each item's nodes (made and encoded by item(i), as a one-item sequence)
// live only while it is written. The stacks are spliced so, and each
// stack's apps. The rest of root is encoded with a placeholder item for
// the list (empty before); each item's text is indented to the
// placeholder's column in its place (block YAML is relative to its
// indentation).
func encodeSpliced(root, list *yaml.Node, n int, item func(int) ([]byte, error)) ([]byte, error) {
	if n == 0 {
		return encode(root)
	}
	list.Content = []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: listPlaceholder}}
	skel, err := encode(root)
	if err != nil {
		return nil, err
	}
	at := bytes.Index(skel, []byte("- "+listPlaceholder+"\n"))
	if at < 0 {
		return nil, fmt.Errorf("internal: no list placeholder in the encoded spec")
	}
	start := bytes.LastIndexByte(skel[:at], '\n') + 1
	indent := skel[start:at]
	if len(bytes.Trim(indent, " ")) != 0 {
		return nil, fmt.Errorf("internal: the list placeholder is not alone on its line")
	}
	out := bytes.NewBuffer(make([]byte, 0, len(skel)))
	out.Write(skel[:start])
	for i := 0; i < n; i++ {
		chunk, err := item(i)
		if err != nil {
			return nil, err
		}
		for len(chunk) > 0 {
			n := bytes.IndexByte(chunk, '\n') + 1
			if n == 0 {
				n = len(chunk)
			}
			if n > 1 {
				out.Write(indent)
			}
			out.Write(chunk[:n])
			chunk = chunk[n:]
		}
	}
	out.Write(skel[at+len("- "+listPlaceholder+"\n"):])
	return out.Bytes(), nil
}

func encode(n *yaml.Node) ([]byte, error) {
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
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
		lines = append(lines, fmt.Sprintf("%s with fields the spec cannot express: see the comment above each.", plural(len(apps), "app")))
	}
	for _, note := range b.res.Notes {
		lines = append(lines, wrap("Note: "+note, 86)...)
	}
	return strings.Join(lines, "\n")
}

// wrap breaks a note into comment lines of about width characters.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = "  " + w
			continue
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

// style lets the encoder pick plain or quoted scalars (JSON made them all
// quoted), and writes small maps and lists of scalars on one line, like the
// hand-written examples. dependsOn stays one entry a line, for the comments.
func style(n *yaml.Node, key string) {
	n.Style = 0
	for i, c := range n.Content {
		k := ""
		if n.Kind == yaml.MappingNode && i%2 == 1 {
			k = n.Content[i-1].Value
		}
		style(c, k)
	}
	if (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && key != "dependsOn" && small(n) {
		n.Style = yaml.FlowStyle
	}
}

func small(n *yaml.Node) bool {
	size := 0
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode || strings.Contains(c.Value, "\n") {
			return false
		}
		size += len(c.Value) + 2
	}
	return len(n.Content) > 0 && size <= 72
}

func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func remove(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// insertAfter puts key: value after the first of the keys present.
func insertAfter(m *yaml.Node, after []string, key string, value *yaml.Node) {
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
	at := len(m.Content)
	for _, a := range after {
		found := false
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == a {
				at, found = i+2, true
				break
			}
		}
		if found {
			break
		}
	}
	m.Content = append(m.Content[:at], append([]*yaml.Node{k, value}, m.Content[at:]...)...)
}
