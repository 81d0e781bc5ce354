package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/safeyaml"
)

// Document is a loaded, validated spec and the line of every field in it.
type Document struct {
	File     string
	Platform *Platform
	lines    map[string]int
	// over are the values another file set (overlay.go), by path.
	over map[string]Override
	// rejected are JSON pointers of values the schema refused.
	rejected []string
}

// Line returns the line of a field path, or of its nearest recorded parent.
func (d *Document) Line(path string) int {
	for p := path; ; {
		if l, ok := d.lines[p]; ok {
			return l
		}
		i := strings.LastIndexAny(p, ".[")
		if i <= 0 {
			return 0
		}
		p = p[:i]
	}
}

// At builds an error located at a field path of this document.
func (d *Document) At(path, format string, args ...any) FieldError {
	if o, ok := d.overrideAt(path); ok {
		return FieldError{File: o.File, Line: o.Line, Path: o.Field + " (" + path + ")", Msg: fmt.Sprintf(format, args...)}
	}
	return FieldError{File: d.File, Line: d.Line(path), Path: path, Msg: fmt.Sprintf(format, args...)}
}

// LoadFile reads, validates and normalizes one spec file.
func LoadFile(path string) (*Platform, error) {
	d, err := Read(path)
	if err != nil {
		return nil, err
	}
	return d.Platform, nil
}

// Read is LoadFile keeping the document (lines) for later located errors.
// The file is read through readlimit.Spec: /dev/zero or a runaway file is
// refused with the limit, not read until memory runs out.
func Read(path string) (*Document, error) {
	data, err := readlimit.ReadFile(path, readlimit.Spec)
	if err != nil {
		return nil, err
	}
	return Load(path, data)
}

// ReadPartial is Read returning, with the errors, the partially decoded
// document (see LoadPartial).
func ReadPartial(path string) (*Document, error) {
	data, err := readlimit.ReadFile(path, readlimit.Spec)
	if err != nil {
		return nil, err
	}
	return LoadPartial(path, data)
}

// Load parses data (named file in errors) and runs every check in order:
// the bytes (UTF-8, no control characters), YAML syntax, duplicate keys,
// the JSON Schema (types, required and unknown fields, patterns), then the
// semantic rules. It returns Errors listing every problem found in one
// pass; only a file that cannot be parsed as YAML at all stops early.
func Load(file string, data []byte) (*Document, error) {
	d, err := LoadPartial(file, data)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// LoadPartial is Load that, when the spec has errors, also returns what
// could be decoded of it (nil when the YAML did not parse), so that checks
// of the whole file, such as the dependency graph's cycles, still run and
// are reported in the same pass. A partial document is not normalized and
// must never be compiled.
func LoadPartial(file string, data []byte) (*Document, error) {
	return LoadPartialWith(file, data, nil)
}

// LoadPartialWith is LoadPartial with overrides from another file applied
// to the tree before any check (overlay.go).
func LoadPartialWith(file string, data []byte, over []Override) (*Document, error) {
	if fe, bad := badByte(file, data); bad {
		return nil, Errors{fe}
	}
	root, err := parseOne(file, data)
	if err != nil {
		return nil, err
	}
	t := &tree{lines: map[string]int{}, file: file, drop: !hasAnchor(root)}
	value := t.value(root, "")
	if t.fatal {
		return nil, t.errs.OrNil()
	}
	d := &Document{File: file, lines: t.lines}
	value, overErrs := d.overlay(value, over)
	schemaErr := d.checkSchema(value)
	var errs Errors
	errs = append(append(errs, t.errs...), overErrs...)
	if schemaErr != nil {
		se, ok := schemaErr.(Errors)
		if !ok {
			return nil, schemaErr
		}
		errs = append(errs, se...)
		for _, ptr := range d.rejected {
			value = without(value, ptr)
		}
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	var p Platform
	d.Platform = &p
	if len(errs) > 0 {
		// Decode what can be decoded and run the semantic rules anyway, so
		// one pass reports every problem; a value the schema already
		// rejected is not reported twice.
		_ = json.Unmarshal(raw, &p)
		return d, append(errs, d.uncovered(d.validate())...).OrNil()
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		// The schema mirrors the types, so this means they disagree: a bug.
		return nil, Errors{{File: file, Line: 1, Msg: "internal: spec accepted by the schema but not by the types: " + err.Error()}}
	}
	if err := d.validate(); err != nil {
		return d, err
	}
	p.normalize()
	return d, nil
}

// uncovered drops the semantic errors on a value (or below one) that the
// schema rejected: the schema's message already says what is wrong there.
// A missing required field rejects nothing, so the rest of its parent is
// still checked.
func (d *Document) uncovered(semErr error) Errors {
	sem, _ := semErr.(Errors)
	rejected := make(map[string]bool, len(d.rejected))
	for _, ptr := range d.rejected {
		rejected[pointerToPath(ptr)] = true
	}
	var out Errors
	for _, e := range sem {
		covered := false
		// Walk up the path (a.b[2].c → a.b[2] → a.b → a): one lookup per
		// level, so thousands of errors cost no more than their depth.
		for p := e.Path; p != "" && !covered; {
			covered = rejected[p]
			i := strings.LastIndexAny(p, ".[")
			if i < 0 {
				break
			}
			p = p[:i]
		}
		if !covered {
			out = append(out, e)
		}
	}
	return out
}

// parseOne parses exactly one YAML document.
func parseOne(file string, data []byte) (*yaml.Node, error) {
	dec := safeyaml.NewDecoder(data)
	root, err := dec.Next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Errors{{File: file, Line: 1, Msg: "empty file: expected a Platform document"}}
		}
		return nil, Errors{yamlError(file, data, err)}
	}
	if written, _ := safeyaml.Check(root); written > maxNodes {
		return nil, Errors{{File: file, Line: 1, Msg: fmt.Sprintf("the document has %d values, more than a spec may (%d)", written, maxNodes)}}
	}
	if extra, err := dec.Next(); err == nil {
		return nil, Errors{{File: file, Line: extra.Line, Msg: "expected one YAML document, found another ('---'); put one Platform per file"}}
	} else if !errors.Is(err, io.EOF) {
		return nil, Errors{yamlError(file, data, err)}
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, Errors{{File: file, Line: root.Line, Msg: "expected a mapping (apiVersion, kind, metadata, spec)"}}
	}
	return root, nil
}

// yamlError turns "yaml: line 7: mapping values are not allowed" into a
// located error. yaml.v3 leaves the line out when it is the first one, and
// its nesting-depth error points at where the nesting began: both get the
// line (and column) here.
func yamlError(file string, data []byte, err error) FieldError {
	fe := FieldError{File: file, Line: 1}
	line, msg := safeyaml.Located(err)
	if line > 0 {
		fe.Line = line
	}
	if strings.HasPrefix(msg, "exceeded max depth") {
		if l, c := tooDeep(data, maxYAMLDepth); l > 0 {
			fe.Line, fe.Col = l, c
		}
		msg += " (nested collections)"
	}
	fe.Msg = "invalid YAML: " + msg
	return fe
}
