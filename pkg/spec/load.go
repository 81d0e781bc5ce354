package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// Document is a loaded, validated spec and the line of every field in it.
type Document struct {
	File     string
	Platform *Platform
	lines    map[string]int
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
func Read(path string) (*Document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Load(path, data)
}

// Load parses data (named file in errors) and runs every check in order:
// YAML syntax, the JSON Schema (types, required and unknown fields,
// patterns), then the semantic rules. It returns Errors listing every
// problem found; a later stage runs only when the earlier ones passed,
// because its input would not be meaningful otherwise.
func Load(file string, data []byte) (*Document, error) {
	root, err := parseOne(file, data)
	if err != nil {
		return nil, err
	}
	t := &tree{lines: map[string]int{}, file: file}
	value := t.value(root, "")
	if err := t.errs.OrNil(); err != nil {
		return nil, err
	}
	d := &Document{File: file, lines: t.lines}
	schemaErr := d.checkSchema(value)
	if schemaErr != nil {
		for _, ptr := range d.rejected {
			value = without(value, ptr)
		}
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	var p Platform
	if schemaErr != nil {
		// Decode what can be decoded and run the semantic rules anyway, so
		// one pass reports every problem; a field the schema already
		// rejected is not reported twice.
		_ = json.Unmarshal(raw, &p)
		d.Platform = &p
		return nil, merge(schemaErr, d.validate())
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		// The schema mirrors the types, so this means they disagree: a bug.
		return nil, Errors{{File: file, Msg: "internal: spec accepted by the schema but not by the types: " + err.Error()}}
	}
	d.Platform = &p
	if err := d.validate(); err != nil {
		return nil, err
	}
	p.normalize()
	return d, nil
}

// merge adds the semantic errors to the schema errors, except those on a
// field (or below one) the schema already reported.
func merge(schemaErr, semErr error) error {
	se, ok := schemaErr.(Errors)
	if !ok {
		return schemaErr
	}
	out := append(Errors(nil), se...)
	sem, _ := semErr.(Errors)
	for _, e := range sem {
		covered := false
		for _, s := range se {
			if e.Path == s.Path || strings.HasPrefix(e.Path, s.Path+".") || strings.HasPrefix(e.Path, s.Path+"[") {
				covered = true
			}
		}
		if !covered {
			out = append(out, e)
		}
	}
	return out.OrNil()
}

// parseOne parses exactly one YAML document.
func parseOne(file string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Errors{{File: file, Line: 1, Msg: "empty file: expected a Platform document"}}
		}
		return nil, Errors{yamlError(file, err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, Errors{{File: file, Line: extra.Line, Msg: "expected one YAML document, found another ('---'); put one Platform per file"}}
	} else if !errors.Is(err, io.EOF) {
		return nil, Errors{yamlError(file, err)}
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, Errors{{File: file, Line: root.Line, Msg: "expected a mapping (apiVersion, kind, metadata, spec)"}}
	}
	return &root, nil
}

// yamlError turns "yaml: line 7: mapping values are not allowed" into a
// located error.
func yamlError(file string, err error) FieldError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var line int
	if n, _ := fmt.Sscanf(msg, "line %d:", &line); n == 1 {
		msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
	}
	return FieldError{File: file, Line: line, Msg: "invalid YAML: " + msg}
}
