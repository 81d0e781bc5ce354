// Package safeyaml is the one way user YAML is decoded: every document is
// parsed into nodes (linear in the text: an alias is a pointer there, not a
// copy), and its alias expansion is counted before anything expands it.
// An input whose aliases would add more values than it writes (and at
// least MinAliasValues), or an alias inside its own anchor, is refused at
// the alias's line: a 6.8 KB "billion laughs" Application no longer turns
// into millions of values in whatever decodes it next (yaml.v3's Decode,
// sigs.k8s.io/yaml's JSON conversion, a spec tree).
//
// Errors read like yaml.v3's own ("yaml: line N: …"), so every caller's
// existing line extraction places them.
package safeyaml

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// MinAliasValues is what aliases may always add to a document; beyond it,
// no more than the document itself writes (expansion at most doubles it).
const MinAliasValues = 10_000

// Error is a document refused before expansion.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("yaml: line %d: %s", e.Line, e.Msg) }

// IsRefused reports whether err is (or wraps) a refusal of this package.
func IsRefused(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Budget is what aliases may add across the documents of one input (a
// stream, a List read item by item, the files of one folder): as many
// values as the input writes, at least MinAliasValues. Shared, it stops an
// input of many small documents, each within a bound of its own, from
// adding MinAliasValues each. The zero Budget is ready.
type Budget struct{ written, added int }

// Check counts the values n expands to, refusing an alias bomb or a
// recursive alias, and charges what its aliases add to the budget. It
// returns the number of values written (nodes, each alias once). The count
// is memoized per anchor: linear in the nodes whatever the expansion.
func (b *Budget) Check(n *yaml.Node) (written int, err error) {
	c := counter{}
	written = c.written(n)
	b.written += written
	if !c.aliases {
		return written, nil
	}
	c.size, c.open = map[*yaml.Node]int{}, map[*yaml.Node]bool{}
	c.allowed = max(b.written, MinAliasValues)
	c.limit = written + c.allowed - b.added
	total, err := c.expanded(n)
	if err != nil {
		return written, err
	}
	b.added += total - written
	return written, nil
}

// Check is Budget.Check with a budget of n's own.
func Check(n *yaml.Node) (written int, err error) {
	return new(Budget).Check(n)
}

type counter struct {
	aliases bool
	// size is the expanded size of an anchored node (what an alias
	// reuses); open are the anchors being counted (a cycle).
	size  map[*yaml.Node]int
	open  map[*yaml.Node]bool
	limit int // values n may expand to
	// allowed is what aliases may add to the whole input, for the message.
	allowed int
}

// written counts nodes as written, an alias as one: without following
// aliases the nodes are a tree.
func (c *counter) written(n *yaml.Node) int {
	if n.Kind == yaml.AliasNode {
		c.aliases = true
	}
	k := 1
	for _, ch := range n.Content {
		k += c.written(ch)
	}
	return k
}

// expanded is the number of values n stands for, aliases expanded; it
// stops at the limit, naming the alias that passed it.
func (c *counter) expanded(n *yaml.Node) (int, error) {
	if n == nil {
		return 0, nil
	}
	if n.Anchor != "" {
		if k, ok := c.size[n]; ok {
			return k, nil
		}
		if c.open[n] {
			return 0, &Error{Line: n.Line, Msg: "recursive YAML alias: an alias inside its own anchor"}
		}
		c.open[n] = true
		defer delete(c.open, n)
	}
	k := 1
	if n.Kind == yaml.AliasNode {
		a, err := c.expanded(n.Alias)
		if err != nil {
			return 0, err
		}
		if k += a; k > c.limit {
			return 0, c.tooMany(n)
		}
	}
	for _, ch := range n.Content {
		a, err := c.expanded(ch)
		if err != nil {
			return 0, err
		}
		if k += a; k > c.limit {
			return 0, c.tooMany(firstAlias(ch))
		}
	}
	if n.Anchor != "" {
		c.size[n] = k
	}
	return k, nil
}

func (c *counter) tooMany(n *yaml.Node) error {
	return &Error{Line: n.Line, Msg: fmt.Sprintf("alias expansion exceeds %d values "+
		"(YAML aliases may add as many values as the input writes, at least %d): write the values out, or fewer aliases", c.allowed, MinAliasValues)}
}

// firstAlias is the first alias at or below n (the line to name), or n.
func firstAlias(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		return n
	}
	for _, ch := range n.Content {
		if a := firstAlias(ch); a.Kind == yaml.AliasNode {
			return a
		}
	}
	return n
}

// Decoder reads the documents of a YAML stream one by one, each checked
// against one budget.
type Decoder struct {
	dec    *yaml.Decoder
	budget *Budget
}

// NewDecoder reads data, its documents sharing a budget of their own.
func NewDecoder(data []byte) *Decoder {
	return NewDecoderWith(data, new(Budget))
}

// NewDecoderWith reads data charging budget: data is part of a larger
// input (an item of a List, a file of a folder).
func NewDecoderWith(data []byte, budget *Budget) *Decoder {
	return &Decoder{dec: yaml.NewDecoder(bytes.NewReader(data)), budget: budget}
}

// Next is the next document node (Kind DocumentNode), io.EOF after the
// last, yaml.v3's error for a syntax error, an *Error for a document
// refused before expansion.
func (d *Decoder) Next() (*yaml.Node, error) {
	var doc yaml.Node
	if err := d.dec.Decode(&doc); err != nil {
		return nil, err
	}
	if _, err := d.budget.Check(&doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// Node parses data's first document into nodes, checked (yaml.Unmarshal
// into a yaml.Node, bounded). An empty input is an empty document node.
func Node(data []byte) (*yaml.Node, error) {
	doc, err := NewDecoder(data).Next()
	if errors.Is(err, io.EOF) {
		return &yaml.Node{Kind: yaml.DocumentNode}, nil
	}
	return doc, err
}

// Unmarshal decodes data's first document into v with yaml.v3 (YAML 1.2:
// an app named y or no stays a string), checked first.
func Unmarshal(data []byte, v any) error {
	doc, err := Node(data)
	if err != nil {
		return err
	}
	if len(doc.Content) == 0 {
		return nil
	}
	return doc.Decode(v)
}

// UnmarshalJSON decodes data as sigs.k8s.io/yaml does (YAML to JSON, then
// encoding/json: the json tags of Kubernetes and Kustomize types), after
// every document of data is checked: the JSON conversion expands aliases.
// opts are sigs.k8s.io/yaml's (yaml.DisallowUnknownFields).
func UnmarshalJSON(data []byte, v any, opts ...sigsyaml.JSONOpt) error {
	if err := CheckAll(data, new(Budget)); err != nil {
		return err
	}
	return sigsyaml.Unmarshal(data, v, opts...)
}

// CheckAll checks every document of data, charging budget, before another
// decoder reads it. A document yaml.v3 cannot parse is refused with its
// error too: it cannot be counted, so it is not handed to a decoder that
// would expand it.
func CheckAll(data []byte, budget *Budget) error {
	d := NewDecoderWith(data, budget)
	for {
		if _, err := d.Next(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// DecodeJSON decodes a checked node into v through JSON, so v's json tags
// apply (Kubernetes types), as sigs.k8s.io/yaml would: a mapping with a
// key that is no string has no JSON form and is an error.
func DecodeJSON(n *yaml.Node, v any) error {
	var plain any
	if err := n.Decode(&plain); err != nil {
		return err
	}
	raw, err := json.Marshal(plain)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// Located splits a YAML error's text, "yaml: line 7: mapping values are not
// allowed", into its line and message; line is 0 when the text names none
// (yaml.v3 leaves it out on the first line). The one reading of that
// format, shared by every decoder's error report.
func Located(err error) (line int, msg string) {
	msg = strings.TrimPrefix(err.Error(), "yaml: ")
	if _, e := fmt.Sscanf(msg, "line %d:", &line); e == nil {
		if i := strings.Index(msg, ":"); i >= 0 {
			msg = strings.TrimSpace(msg[i+1:])
		}
	}
	return line, msg
}
