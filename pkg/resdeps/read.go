package resdeps

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/safeyaml"
)

// ReadDir reads an offline inventory: DIR/<app>/ holds the manifests app
// <app> deploys, as `argocd app manifests`, `helm template` or `kustomize
// build` print them (*.yaml, *.yml, *.json, in subfolders too): multi-
// document YAML, JSON, List kinds. An app folder reads at most
// readlimit.Import bytes. Every problem in every file is reported in one
// error, each at its file and line. Apps come sorted by name, objects in
// file order (files by path); Namespace and CreatesNamespace are left for
// the caller, who knows the Applications.
func ReadDir(dir string) ([]App, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var apps []App
	var problems []error
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, name)
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 { // a linked app folder is read, not skipped
			fi, err := os.Stat(path)
			isDir = err == nil && fi.IsDir()
			path += string(filepath.Separator) // WalkDir follows a root given so
		}
		switch {
		case strings.HasPrefix(name, "."):
		case isDir:
			a, errs := readApp(name, path)
			problems = append(problems, errs...)
			apps = append(apps, a)
		case isManifest(name):
			problems = append(problems, fmt.Errorf("%s: not in an app folder: manifests go in %s/<app>/, one folder per Application", path, dir))
		}
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	if len(apps) == 0 {
		return nil, fmt.Errorf("%s: no app folders: want %s/<app>/*.yaml, one folder per Application", dir, dir)
	}
	return apps, nil
}

func isManifest(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func readApp(name, dir string) (App, []error) {
	a := App{Name: name}
	var problems []error
	var total int64
	var aliases safeyaml.Budget // the app folder's files together
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			problems = append(problems, err)
			return nil
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !isManifest(d.Name()) {
			return nil
		}
		if !d.Type().IsRegular() { // a link to a file is read; a device or pipe is not
			if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
				problems = append(problems, fmt.Errorf("%s: not a regular file", path))
				return nil
			}
		}
		data, err := readlimit.ReadFile(path, readlimit.Import-total)
		if err != nil {
			if readlimit.IsTooLarge(err) {
				err = fmt.Errorf("%s: app folder %s is larger than the %s limit", path, dir, readlimit.Human(readlimit.Import))
			}
			problems = append(problems, err)
			return filepath.SkipAll
		}
		total += int64(len(data))
		objs, errs := parse(path, data, &aliases)
		a.Objects = append(a.Objects, objs...)
		problems = append(problems, errs...)
		return nil
	})
	if err != nil {
		problems = append(problems, err)
	}
	return a, problems
}

// Parse reads the objects of one file: YAML documents (JSON is YAML), each
// an object or a List of them. Empty documents are skipped.
func Parse(file string, data []byte) ([]Object, []error) {
	return parse(file, data, new(safeyaml.Budget))
}

// parse is Parse charging YAML aliases to budget (an app folder's).
func parse(file string, data []byte, budget *safeyaml.Budget) ([]Object, []error) {
	var out []Object
	var problems []error
	bad := func(line int, format string, args ...any) {
		where := file
		if line > 0 {
			where = fmt.Sprintf("%s:%d", file, line)
		}
		problems = append(problems, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...)))
	}
	dec := safeyaml.NewDecoderWith(data, budget)
	for {
		doc, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line, msg := safeyaml.Located(err)
			bad(line, "YAML: %s%s", msg, templateHint(data))
			break // nothing after a syntax error can be read
		}
		if len(doc.Content) == 0 || (doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Tag == "!!null") {
			continue
		}
		n := len(problems)
		out = append(out, objects(doc.Content[0], "", bad)...)
		if len(problems) > n && templateHint(data) != "" {
			problems[len(problems)-1] = fmt.Errorf("%w%s", problems[len(problems)-1], templateHint(data))
		}
	}
	for i := range out {
		out[i].File = file
	}
	return out, problems
}

// objects reads one object, or the items of a List.
func objects(n *yaml.Node, field string, bad func(int, string, ...any)) []Object {
	if n.Kind != yaml.MappingNode {
		bad(n.Line, "%swant a Kubernetes object (a map with apiVersion and kind)", prefix(field))
		return nil
	}
	var obj map[string]any
	if err := n.Decode(&obj); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			err = errors.New(strings.Join(te.Errors, "; "))
		}
		line, msg := safeyaml.Located(err)
		if line == 0 {
			line = n.Line
		}
		bad(line, "%s%s", prefix(field), msg)
		return nil
	}
	o := Object{Obj: obj, Line: n.Line}
	var missing []string
	for _, f := range []string{"apiVersion", "kind"} {
		if s, ok := obj[f].(string); !ok || s == "" {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		bad(n.Line, "%sno %s: not a Kubernetes object", prefix(field), strings.Join(missing, " or "))
		return nil
	}
	if strings.HasSuffix(o.Kind(), "List") && has(obj, "items") {
		items, ok := valueNode(n, "items")
		if !ok || (items.Kind != yaml.SequenceNode && !(items.Kind == yaml.ScalarNode && items.Tag == "!!null")) {
			bad(n.Line, "%s%s: items is not a list", prefix(field), o.Kind())
			return nil
		}
		var out []Object
		for i, it := range items.Content {
			out = append(out, objects(it, fmt.Sprintf("%sitems[%d]", field, i), bad)...)
		}
		return out
	}
	if o.Name() == "" && str(obj, "metadata", "generateName") == "" {
		bad(n.Line, "%s%s: no metadata.name", prefix(field), o.Kind())
		return nil
	}
	return []Object{o}
}

// templateHint: a file that does not read and holds {{ is most likely a
// template not rendered (rendered manifests may hold {{ in strings, such
// as alerting rules, so it is only a hint on an error).
func templateHint(data []byte) string {
	i := bytes.Index(data, []byte("{{"))
	if i < 0 {
		return ""
	}
	return fmt.Sprintf(" (template syntax {{ ... }} at line %d: render it first: helm template, kustomize build or argocd app manifests)", bytes.Count(data[:i], []byte("\n"))+1)
}

func prefix(field string) string {
	if field == "" {
		return ""
	}
	return field + ": "
}

func valueNode(m *yaml.Node, k string) (*yaml.Node, bool) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == k {
			return m.Content[i+1], true
		}
	}
	return nil, false
}

// Names lists the apps' names, sorted.
func Names(apps []App) []string {
	out := make([]string, len(apps))
	for i, a := range apps {
		out[i] = a.Name
	}
	sort.Strings(out)
	return out
}
