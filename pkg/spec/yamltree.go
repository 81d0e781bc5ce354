package spec

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// tree converts a parsed YAML node into plain JSON values (map[string]any,
// []any, string, json.Number, bool, nil) while recording the line of every
// field path. JSON values are what the schema validator and encoding/json
// understand; the lines are what makes every later error point at the file.
type tree struct {
	lines map[string]int
	errs  Errors
	file  string
	// fatal is set by errors after which the values are not worth
	// checking further (merge keys, non-string keys). Alias bombs and
	// recursive aliases never get here: safeyaml refused them in parseOne.
	fatal bool
	// drop: a node's children are dropped once converted, so the nodes
	// (about 20 times the text) are freed while the values are made, not
	// held beside them all (a spec of 10,000 apps, from import). Only in
	// a document without anchors: an alias converts its anchor again.
	drop bool
}

// hasAnchor says whether any node under n defines an anchor.
func hasAnchor(n *yaml.Node) bool {
	if n.Anchor != "" {
		return true
	}
	for _, c := range n.Content {
		if hasAnchor(c) {
			return true
		}
	}
	return false
}

func (t *tree) fail(line int, path, msg string) {
	t.errs = append(t.errs, FieldError{File: t.file, Line: line, Path: path, Msg: msg})
	t.fatal = true
}

// maxNodes bounds the values one spec may write (what aliases may add on
// top is safeyaml's bound).
const maxNodes = 1_000_000

func (t *tree) value(n *yaml.Node, path string) any {
	if _, seen := t.lines[path]; !seen {
		t.lines[path] = n.Line
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return t.value(n.Content[0], path)
	case yaml.AliasNode: // bounded and acyclic: safeyaml.Check
		return t.value(n.Alias, path)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		first := make(map[string]int, len(n.Content)/2) // key → its line
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				t.fail(k.Line, path, "YAML merge keys (<<) are not supported; write the fields out")
				continue
			}
			if k.Kind != yaml.ScalarNode || (k.Tag != "!!str" && k.ShortTag() != "!!str") {
				t.fail(k.Line, path, fmt.Sprintf("mapping key %q must be a string", k.Value))
				continue
			}
			child := joinPath(path, k.Value)
			if l, dup := first[k.Value]; dup {
				// YAML parsers disagree on which one wins (yaml.v3 keeps
				// the last): never guess. The first is kept for the
				// other checks.
				t.errs = append(t.errs, FieldError{File: t.file, Line: k.Line, Path: child,
					Msg: fmt.Sprintf("duplicate key %q: already set at line %d; keep one", k.Value, l)})
				continue
			}
			first[k.Value] = k.Line
			t.lines[child] = k.Line
			m[k.Value] = t.value(v, child)
		}
		if t.drop {
			n.Content = nil
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			s[i] = t.value(c, fmt.Sprintf("%s[%d]", path, i))
		}
		if t.drop {
			n.Content = nil
		}
		return s
	case yaml.ScalarNode:
		return t.scalar(n, path)
	}
	return nil
}

func (t *tree) scalar(n *yaml.Node, path string) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			t.fail(n.Line, path, err.Error())
		}
		return b
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			t.fail(n.Line, path, err.Error())
			return n.Value
		}
		if n.ShortTag() == "!!int" {
			var i int64
			if err := n.Decode(&i); err == nil {
				return json.Number(strconv.FormatInt(i, 10))
			}
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	default: // !!str, !!timestamp, !!binary: keep the text as written
		return n.Value
	}
}

// joinPath appends a field name to a dotted path.
func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// pointerToPath turns a JSON pointer (/spec/stacks/0/name) into the dotted
// path the loader records (spec.stacks[0].name).
func pointerToPath(ptr string) string {
	if ptr == "" || ptr == "/" {
		return ""
	}
	var b strings.Builder
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

// without removes the value at a JSON pointer (array elements become null,
// so later indexes keep their meaning). Used to drop what the schema
// rejected before a best-effort decode.
func without(v any, ptr string) any {
	if ptr == "" {
		return nil
	}
	toks := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	cur := v
	for i, tok := range toks {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		last := i == len(toks)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				delete(c, tok)
				return v
			}
			cur = c[tok]
		case []any:
			k, err := strconv.Atoi(tok)
			if err != nil || k < 0 || k >= len(c) {
				return v
			}
			if last {
				c[k] = nil
				return v
			}
			cur = c[k]
		default:
			return v
		}
	}
	return v
}
