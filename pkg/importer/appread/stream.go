package appread

import (
	"bytes"
	"errors"
	"io"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/deployctl/deployctl/internal/safeyaml"
)

// Streaming a List. `kubectl get applications -A -o yaml` prints one YAML
// document, a List whose items are block sequence entries ("- " at one
// column, below an "items:" key at column 0). Parsed whole, its node tree
// is 15 to 30 times the text (issue 11: 10,000 Applications, 8 MB, several
// hundred MB); here each item is parsed on its own, from its own lines, and
// released once read.
//
// The text is split where the whole parse would see a new item: a line of
// exactly the items' indentation starting with "- ". A split anywhere else
// (that line inside a quoted scalar or a flow collection of the item
// before) leaves that item's text unterminated, so its parse fails; an
// anchor defined in another item, likewise. Any such failure, or a layout
// this does not recognize (document markers, directives, tabs, a second
// items key, a head that is not a List), undoes what was added and the
// document is parsed whole, as before: same result, same errors.

// itemsLayout is where a List's items are in its text.
type itemsLayout struct {
	keyStart, end int   // the "items:" line's offset, and the end of its items
	starts        []int // each item's offset
	lines         []int // each item's line (1-based)
}

// splitList finds the items of a List printed as kubectl prints it; ok is
// false for any other layout.
func splitList(data []byte) (l itemsLayout, ok bool) {
	l.keyStart = -1
	indent := -1 // the items' column, once the first is seen
	line := 0
	inItems := false
	for off := 0; off < len(data); {
		line++
		next := bytes.IndexByte(data[off:], '\n') + 1
		if next == 0 {
			next = len(data) - off
		}
		text := bytes.TrimRight(data[off:off+next], "\r\n")
		lineStart := off
		off += next
		trimmed := bytes.TrimLeft(text, " ")
		col := len(text) - len(trimmed)
		switch {
		case len(trimmed) == 0 || trimmed[0] == '#':
			continue // blank or a comment: belongs to whatever is around it
		case trimmed[0] == '\t', col == 0 && (trimmed[0] == '%' || bytes.HasPrefix(trimmed, []byte("---")) || bytes.HasPrefix(trimmed, []byte("..."))):
			return l, false
		}
		if col == 0 && trimmed[0] == '-' {
			if !inItems || indent > 0 {
				return l, false
			}
		} else if col == 0 {
			if inItems {
				inItems = false
				l.end = lineStart
			}
			if key := bytes.TrimRight(text, " "); string(key) == "items:" {
				if l.keyStart >= 0 {
					return l, false // a second items key
				}
				l.keyStart, inItems, l.end = lineStart, true, len(data)
			}
			continue
		}
		if !inItems {
			continue
		}
		if indent < 0 {
			indent = col
		}
		isItem := col == indent && trimmed[0] == '-' && (len(trimmed) == 1 || trimmed[1] == ' ')
		switch {
		case isItem:
			l.starts = append(l.starts, lineStart)
			l.lines = append(l.lines, line)
		case col <= indent:
			return l, false // not an item, not inside one: some other layout
		}
	}
	return l, l.keyStart >= 0 && len(l.starts) > 0
}

// parseList reads a List document item by item; false (with nothing
// added) when the document is to be parsed whole.
func (in *Input) parseList(file, folder string, data []byte) bool {
	l, ok := splitList(data)
	if !ok || !listWithoutItems(append(append([]byte(nil), data[:l.keyStart]...), data[l.end:]...), &in.aliases) {
		return false
	}
	// The lines between "items:" and the first item (blank, or comments)
	// are in neither the head nor an item, yet the whole parse reads them:
	// a comment holding a byte YAML refuses (invalid UTF-8, a control
	// character) fails the whole document, so it must fail here too.
	if !decodes(data[l.keyStart:l.starts[0]], &in.aliases) {
		return false
	}
	saved := *in // what came before: items only append to it
	for i, start := range l.starts {
		end := l.end
		if i+1 < len(l.starts) {
			end = l.starts[i+1]
		}
		item, ok := parseItem(data[start:end], l.lines[i]-1, &in.aliases)
		if !ok {
			*in = saved
			return false
		}
		in.object(file, folder, item, " items["+strconv.Itoa(i)+"]")
	}
	return true
}

// decodes: the text reads as YAML to its end without an error.
func decodes(text []byte, budget *safeyaml.Budget) bool {
	dec := safeyaml.NewDecoderWith(text, budget)
	for {
		if _, err := dec.Next(); err != nil {
			return errors.Is(err, io.EOF)
		}
	}
}

// listWithoutItems: the document without its items is one mapping whose
// kind is a List, and it decodes.
func listWithoutItems(head []byte, budget *safeyaml.Budget) bool {
	dec := safeyaml.NewDecoderWith(head, budget)
	doc, err := dec.Next()
	if err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return false
	}
	if _, err := dec.Next(); !errors.Is(err, io.EOF) {
		return false
	}
	if _, ok := listHead(listWith(doc.Content[0])); !ok {
		return false
	}
	return true
}

// listWith is the head with an empty items sequence, the shape listHead
// checks (and decodes without the items).
func listWith(head *yaml.Node) *yaml.Node {
	n := *head
	n.Content = append(append([]*yaml.Node(nil), head.Content...),
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "items"},
		&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"})
	return &n
}

// parseItem parses one item's text ("- ..." and its lines) as the
// one-entry sequence it is, its lines shifted by offset to the file's; ok
// only if it parses and decodes as it would in the whole document.
func parseItem(text []byte, offset int, budget *safeyaml.Budget) (*yaml.Node, bool) {
	dec := safeyaml.NewDecoderWith(text, budget)
	doc, err := dec.Next()
	if err != nil || len(doc.Content) != 1 {
		return nil, false
	}
	if _, err := dec.Next(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	seq := doc.Content[0]
	if seq.Kind != yaml.SequenceNode || len(seq.Content) != 1 {
		return nil, false
	}
	item := seq.Content[0]
	var v any
	if err := item.Decode(&v); err != nil {
		return nil, false
	}
	shift(item, offset)
	return item, true
}

func shift(n *yaml.Node, by int) {
	n.Line += by
	for _, c := range n.Content {
		shift(c, by)
	}
}
