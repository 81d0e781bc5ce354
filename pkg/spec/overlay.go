package spec

import (
	"strings"
)

// Override is one value another file sets over the spec: environment.yaml's
// timeouts and retries. Overrides are a layer of loading: they are written
// into the spec's tree before the schema, the defaults and the rules, so an
// overridden value meets exactly the rules a written one does, and an error
// in it names the other file's line and field. An app's own value still
// wins over an overridden default, through the ordinary merge.
type Override struct {
	Path  string // where in the spec, mapping keys only: "spec.defaults.timeouts.sync"
	Value any    // as the spec's tree holds it: a string for a duration, a json.Number for a count
	File  string // the file that sets it
	Line  int
	Field string // its name in File: "timeouts.sync"
}

// overlay writes the overrides into value, the spec's decoded tree, and
// records each at its own file and line; a mapping it has to create (the
// spec has no spec.defaults.retry) is recorded at the override that made it.
func (d *Document) overlay(value any, over []Override) (any, Errors) {
	if len(over) == 0 {
		return value, nil
	}
	root, ok := value.(map[string]any)
	if !ok {
		return value, nil // not a mapping: the schema reports it
	}
	if d.over == nil {
		d.over = map[string]Override{}
	}
	var errs Errors
	for _, o := range over {
		keys := strings.Split(o.Path, ".")
		m := root
		for i, k := range keys[:len(keys)-1] {
			at := strings.Join(keys[:i+1], ".")
			next, isMap := m[k].(map[string]any)
			if !isMap && m[k] != nil {
				errs = append(errs, d.At(at, "is not a mapping, so %s (%s:%d) cannot be set in it", o.Field, o.File, o.Line))
				m = nil
				break
			}
			if !isMap {
				next = map[string]any{}
				m[k] = next
				d.lines[at], d.over[at] = o.Line, o
			}
			m = next
		}
		if m == nil {
			continue
		}
		m[keys[len(keys)-1]] = o.Value
		d.lines[o.Path], d.over[o.Path] = o.Line, o
	}
	return root, errs
}

// overrideAt is the override that set path or the nearest of its parents
// recorded, if that one came from an override.
func (d *Document) overrideAt(path string) (Override, bool) {
	for p := path; p != ""; {
		if _, ok := d.lines[p]; ok {
			o, over := d.over[p]
			return o, over
		}
		i := strings.LastIndexAny(p, ".[")
		if i <= 0 {
			break
		}
		p = p[:i]
	}
	return Override{}, false
}

// Sets reports whether the spec text (not an override) sets path: an app
// that sets its own timeout keeps it over environment.yaml's default.
func (d *Document) Sets(path string) bool {
	_, written := d.lines[path]
	_, over := d.over[path]
	return written && !over
}
