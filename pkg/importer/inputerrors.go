package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/safeyaml"
	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/importer/internal/words"
	"github.com/deployctl/deployctl/pkg/importer/internal/yamlnode"
	"github.com/deployctl/deployctl/pkg/spec"
)

// Input values reach the spec's rules as they are: a destination namespace
// Web_NS, a label value of 70 characters. The spec loader refuses them at
// a line of a spec nobody will see (it is never written); inputErrors
// moves each such refusal to the input: the Application's file and line,
// the field as the Application names it. Only what no input field gave
// stays an internal error: that one is the importer's bug.

// appField is spec.stacks[i].apps[j].REST.
var appField = regexp.MustCompile(`^spec\.stacks\[(\d+)\]\.apps\[(\d+)\](?:\.(.+))?$`)

// inputErrors is loadErr (the spec loader's on the imported spec, which
// writes b.res.Platform's stacks and apps in order) with every error on a
// value input Applications gave located in the input: an app's own field
// at its Application, a value factored into spec.defaults or spec.argocd at
// every Application that has it. What no input field gave stays, marked as
// the importer's bug. nil when nothing could be located (loadErr stands).
func (b *builder) inputErrors(loadErr error) error {
	var errs spec.Errors
	if !errors.As(loadErr, &errs) {
		return nil
	}
	var found []finding
	var bugs []string
	for _, e := range errs {
		f := b.locate(b.res.Platform, e)
		if len(f) == 0 {
			bugs = append(bugs, e.Error())
		}
		found = append(found, f...)
	}
	if len(found) == 0 {
		return nil
	}
	fieldLines(found)
	var out []string
	seen := map[string]bool{} // an Application's field, said once
	for _, f := range found {
		where := fmt.Sprintf("%s:%d: Application %s: %s", f.src.File, f.line, f.app, fieldName(f.field))
		if !seen[where] {
			seen[where] = true
			out = append(out, where+": "+f.msg)
		}
	}
	msg := fmt.Sprintf("%s in the input (nothing was written):\n  %s", words.Plural(len(out), "problem"), strings.Join(out, "\n  "))
	if len(bugs) > 0 {
		msg += "\ninternal: and in the imported spec (a bug in the importer):\n  " + strings.Join(bugs, "\n  ")
	}
	return errors.New(msg)
}

// finding is a spec error on a field of an input Application.
type finding struct {
	src   *appread.Manifest
	app   string
	field []string // the Application's field
	msg   string
	line  int
}

// locate finds the Applications e's value came from; none when it came
// from none.
func (b *builder) locate(p *spec.Platform, e spec.FieldError) []finding {
	at := func(src *appread.Manifest, field []string) finding {
		name, _ := appValue(src, []string{"metadata", "name"}).(string)
		return finding{src: src, app: name, field: field, msg: e.Msg, line: src.Line}
	}
	if m := appField.FindStringSubmatch(e.Path); m != nil {
		i, _ := strconv.Atoi(m[1])
		j, _ := strconv.Atoi(m[2])
		if i >= len(p.Spec.Stacks) || j >= len(p.Spec.Stacks[i].Apps) {
			return nil
		}
		src, field := b.res.Sources[p.Spec.Stacks[i].Apps[j].Name], inputField(m[3])
		if src == nil || field == nil {
			return nil
		}
		return []finding{at(src, field)}
	}
	// A value factored out of the apps: at each app that has it.
	var field []string
	var value any
	switch {
	case e.Path == "spec.argocd.project":
		field, value = []string{"spec", "project"}, p.Spec.ArgoCD.Project
	case e.Path == "spec.argocd.namespace", e.Path == "spec.argocd.server" && strings.Contains(p.Spec.ArgoCD.Server, "."+p.Spec.ArgoCD.Namespace+"."):
		// Argo CD's namespace is where most Applications are, and its
		// server's default address is made of it.
		field, value = []string{"metadata", "namespace"}, p.Spec.ArgoCD.Namespace
	case strings.HasPrefix(e.Path, "spec.defaults."):
		rest := strings.TrimPrefix(e.Path, "spec.defaults.")
		if field = inputField(rest); field == nil {
			return nil
		}
		value = valueAt(jsonOf(p.Spec.Defaults), segments(rest))
	default:
		return nil
	}
	var out []finding
	for _, name := range slices.Sorted(maps.Keys(b.res.Sources)) {
		src := b.res.Sources[name]
		if v := appValue(src, field); v != nil && reflect.DeepEqual(v, jsonOf(value)) {
			out = append(out, at(src, field))
		}
	}
	return out
}

// appValue is the value at field of the Application, as JSON.
func appValue(m *appread.Manifest, field []string) any {
	return valueAt(m.View(), field)
}

// valueAt walks JSON values (maps and lists) along a path.
func valueAt(v any, path []string) any {
	for _, k := range path {
		switch c := v.(type) {
		case map[string]any:
			v = c[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

// jsonOf is v as plain JSON values.
func jsonOf(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}

// inputField is the Application field (path segments) a spec app field
// comes from, or nil for one the import makes itself.
func inputField(rest string) []string {
	head, tail, _ := strings.Cut(rest, ".")
	if i := strings.IndexByte(head, '['); i >= 0 {
		head, tail = rest[:i], strings.TrimPrefix(rest[i:], ".")
	}
	switch head {
	case "name":
		return []string{"metadata", "name"}
	case "applicationNamespace":
		return []string{"metadata", "namespace"}
	case "labels", "annotations": // a key may hold dots: the rest is the key
		if tail == "" {
			return []string{"metadata", head}
		}
		return []string{"metadata", head, tail}
	case "syncOptions":
		return append([]string{"spec", "syncPolicy", "syncOptions"}, segments(tail)...)
	case "project", "destination", "source", "sources", "syncPolicy", "ignoreDifferences", "info":
		return append([]string{"spec"}, segments(rest)...)
	}
	return nil
}

// fieldName joins segments back: spec.info[0].name.
func fieldName(field []string) string {
	var b strings.Builder
	for i, k := range field {
		if _, err := strconv.Atoi(k); err == nil && i > 0 {
			b.WriteString("[" + k + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(k)
	}
	return b.String()
}

// segments splits a.b[2].c into a, b, 2, c.
func segments(p string) []string {
	var out []string
	for _, s := range strings.Split(p, ".") {
		for s != "" {
			i := strings.IndexByte(s, '[')
			if i < 0 {
				out = append(out, s)
				break
			}
			if i > 0 {
				out = append(out, s[:i])
			}
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				out = append(out, s[i:])
				break
			}
			out = append(out, s[i+1:i+end])
			s = s[i+end+1:]
		}
	}
	return out
}

// fieldLines sets the line of each finding's field, reading each input
// file once more (only on this error path: a Manifest keeps no lines); a
// finding keeps its object's line when the file cannot be read again
// (standard input, Kustomize output) or the field is not found.
func fieldLines(found []finding) {
	byFile := map[string][]*finding{}
	for i := range found {
		byFile[found[i].src.File] = append(byFile[found[i].src.File], &found[i])
	}
	for file, fs := range byFile {
		data, err := readlimit.ReadFile(file, readlimit.Import)
		if err != nil {
			continue
		}
		dec := safeyaml.NewDecoder(data)
		for {
			doc, err := dec.Next()
			if err != nil {
				break
			}
			for _, f := range fs {
				if obj := objectAt(doc, f.src.Line); obj != nil {
					f.line = nodeLine(obj, f.field)
				}
			}
		}
	}
}

// nodeLine is the line of field below n, as far as it goes.
func nodeLine(n *yaml.Node, field []string) int {
	for _, k := range field {
		c := child(n, k)
		if c == nil {
			break
		}
		n = c
	}
	return n.Line
}

// objectAt is the mapping starting at line (an object, or a List's item).
func objectAt(n *yaml.Node, line int) *yaml.Node {
	if n.Kind == yaml.MappingNode && n.Line == line {
		return n
	}
	for _, c := range n.Content {
		if o := objectAt(c, line); o != nil {
			return o
		}
	}
	return nil
}

// child is a mapping's value at key, a sequence's item at index.
func child(n *yaml.Node, k string) *yaml.Node {
	if n.Kind == yaml.SequenceNode {
		if i, err := strconv.Atoi(k); err == nil && i >= 0 && i < len(n.Content) {
			return n.Content[i]
		}
		return nil
	}
	return yamlnode.Get(n, k)
}
