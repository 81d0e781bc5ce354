// Package yamlnode edits and encodes yaml.v3 nodes for the import's spec
// writer: the spec types' field order, small maps on one line, and long
// lists encoded item by item so their nodes never live all at once.
package yamlnode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/deployctl/deployctl/internal/safeyaml"
)

// Item is n as the one item of a block sequence.
func Item(n *yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{n}}
}

// Nodes is v as YAML nodes, through JSON: the spec types' field order.
func Nodes(v any) (*yaml.Node, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return safeyaml.Node(raw)
}

// listPlaceholder stands for a list's items while the rest is encoded.
const listPlaceholder = "deployctl-import-list-placeholder-9f2c41"

// EncodeSpliced encodes root as yaml.v3 would in one go, but the n items of
// its block sequence list one by one: the encoder keeps every event of a
// document until it ends, and the nodes of 10,000 apps are hundreds of MB;
// each item's nodes (made and encoded by item(i), as a one-item sequence)
// live only while it is written. The stacks are spliced so, and each
// stack's apps. The rest of root is encoded with a placeholder item for
// the list (empty before); each item's text is indented to the
// placeholder's column in its place (block YAML is relative to its
// indentation).
func EncodeSpliced(root, list *yaml.Node, n int, item func(int) ([]byte, error)) ([]byte, error) {
	if n == 0 {
		return Encode(root)
	}
	list.Content = []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: listPlaceholder}}
	skel, err := Encode(root)
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

// Encode is n as YAML, indented by two.
func Encode(n *yaml.Node) ([]byte, error) {
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

// Style lets the encoder pick plain or quoted scalars (JSON made them all
// quoted), and writes small maps and lists of scalars on one line, like the
// hand-written examples. dependsOn stays one entry a line, for the comments.
func Style(n *yaml.Node, key string) {
	n.Style = 0
	for i, c := range n.Content {
		k := ""
		if n.Kind == yaml.MappingNode && i%2 == 1 {
			k = n.Content[i-1].Value
		}
		Style(c, k)
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

// Get is the value of key in mapping m, or nil.
func Get(m *yaml.Node, key string) *yaml.Node {
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

// Remove drops key and its value from mapping m.
func Remove(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// InsertAfter puts key: value after the first of the keys present.
func InsertAfter(m *yaml.Node, after []string, key string, value *yaml.Node) {
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
