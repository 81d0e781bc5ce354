// Package appread reads the Argo CD Applications an import starts from:
// files, folders, `kubectl get -o yaml` dumps and Lists (item by item),
// stdin, ApplicationSets with a List generator (expanded as Argo CD's
// controller would), and Kustomize folders (built, local bases only).
// Every problem is found in one pass and named by file and line; what is
// not an Application is noted, never silently dropped.
package appread

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"gopkg.in/yaml.v3"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/safeyaml"
	"github.com/deployctl/deployctl/pkg/importer/appdiff"
	"github.com/deployctl/deployctl/pkg/importer/internal/words"
	"github.com/deployctl/deployctl/pkg/importer/internal/yamlnode"
)

// Manifest is one Application read from the input.
type Manifest struct {
	// File is where it was read, Line where its object starts there, Folder
	// the folder group (see Read).
	File   string
	Line   int
	Folder string
	// Raw is the object as written, as far as the round trip compares it
	// (appdiff.Comparable: name, namespace, labels, annotations and spec, empty
	// values pruned), in compact JSON; App is the object typed, without
	// status. Raw is what the round trip compares against, so a field the
	// typed struct does not know is still reported. Kept as bytes, not as
	// a map or YAML nodes: a map of every field of 10,000 Applications is
	// several times the input (issue 11).
	Raw []byte
	App *appv1.Application
	// V3 is what Argo CD 3 adds that App has no place for; nil when none.
	V3 *V3
}

// View is Raw decoded: a fresh value the caller may change.
func (m *Manifest) View() map[string]any {
	var v map[string]any
	_ = json.Unmarshal(m.Raw, &v)
	return v
}

// Where is "file:line" of the manifest.
func (m *Manifest) Where() string { return fmt.Sprintf("%s:%d", m.File, m.Line) }

// Input is everything read: the Applications, what was left out and why,
// and every problem found.
type Input struct {
	Apps []Manifest
	// Skipped names every other Kubernetes object found ("AppProject
	// default (apps/projects.yaml:1)").
	Skipped []string
	// AppSets are the ApplicationSets found and not expanded: their
	// Applications are made by the controller, not written in the input.
	AppSets []string
	// Expanded are the ApplicationSets whose List generator was expanded
	// into Applications (expandList), with their names.
	Expanded []string
	// NotObjects are documents that are no Kubernetes object (Helm values,
	// other YAML): "file:line: why".
	NotObjects []string
	// Built are the Kustomize folders built (with what they were read
	// instead of file by file).
	Built []string
	// Unread say which files and folders beside a kustomization hold
	// Applications its build does not read, and how to read them (unread.go).
	Unread []string
	// Problems are the errors found, "file:line: what"; Err joins them.
	Problems []string

	// allowed is what the current argument's kustomizations may name
	// (allowedRoot).
	allowed string
	// aliases is what YAML aliases may add to the current argument, all
	// its files and documents together.
	aliases safeyaml.Budget
	bytes   int64    // read so far for the current input argument
	size    int64    // parsed in all, every argument (Size)
	twice   []string // Applications read twice, the same both times
	args    []string // the paths given, as given (unread.go)
}

// Err is every problem found, one a line, or nil.
func (in *Input) Err() error {
	if len(in.Problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s in the input (nothing was written):\n  %s", words.Plural(len(in.Problems), "problem"), strings.Join(in.Problems, "\n  "))
}

func (in *Input) problem(format string, args ...any) {
	in.Problems = append(in.Problems, fmt.Sprintf(format, args...))
}

// Read reads files and folders (recursively: *.yaml, *.yml, *.json, hidden
// entries skipped) holding Applications as single objects, multi-document
// YAML or Lists (kind: List or *List, as `kubectl get -o yaml` prints).
// Status and other server-side fields are ignored. A folder with a
// kustomization.yaml is built with the Kustomize API (local bases only) and
// its output read instead of its files; a Helm chart (Chart.yaml) must be
// rendered first. Every input is read to the end, and every problem is
// reported at once: the error lists them all.
//
// Folder is the first folder below a folder argument
// (apps/foundation/metallb.yaml read from apps → "foundation"); a file
// directly in it, or a file argument, gets the name of its own folder.
//
// Each argument may hold up to readlimit.Import bytes (a folder: in total).
func Read(paths []string) (*Input, error) {
	in := &Input{args: paths}
	for _, root := range paths {
		in.bytes, in.aliases = 0, safeyaml.Budget{}
		fi, err := os.Stat(root)
		if err != nil {
			in.problem("%v", err)
			continue
		}
		if !fi.IsDir() {
			if dir := filepath.Dir(root); kustomizationFile(dir) == filepath.Clean(root) {
				in.readDir(dir) // a kustomization file stands for its folder, built
				continue
			}
			in.readFile(root, root, folderName(filepath.Dir(root)))
			continue
		}
		in.readDir(root)
	}
	return in, in.Err()
}

func (in *Input) readDir(root string) {
	var files []string
	kustomizations := map[string]bool{}
	charts := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			in.problem("%v", err)
			return nil
		}
		if p != root && strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			if kustomizationFile(p) != "" {
				kustomizations[p] = true
				return filepath.SkipDir
			}
			if isFile(filepath.Join(p, "Chart.yaml")) {
				charts[p] = true
				return filepath.SkipDir
			}
			return nil
		}
		if isManifest(p) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		in.problem("%v", err)
	}
	folderOf := func(p string) string {
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if first, _, ok := strings.Cut(rel, "/"); ok || (rel != "." && isDir(p)) {
			return first
		}
		return folderName(root)
	}
	sort.Strings(files)
	for _, f := range files {
		in.readFile(f, root, folderOf(f))
	}
	for _, dir := range slices.Sorted(maps.Keys(charts)) {
		in.chart(dir)
	}
	in.allowed = allowedRoot(root)
	for _, dir := range in.kustomizeRoots(kustomizations) {
		in.kustomize(dir, root, folderOf(dir))
	}
	for _, dir := range slices.Sorted(maps.Keys(kustomizations)) {
		in.unreadBeside(dir)
	}
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func isManifest(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func folderName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Base(dir)
	}
	return filepath.Base(abs)
}

// readFile reads one file, counting it against the argument's bound.
func (in *Input) readFile(file, arg, folder string) {
	data, err := readlimit.ReadFile(file, readlimit.Import)
	if err != nil {
		in.problem("%v", err)
		return
	}
	if !in.count(arg, int64(len(data))) {
		return
	}
	in.parse(file, folder, data)
}

// count adds n bytes to the current argument's total; false (and a
// problem) past the bound.
func (in *Input) count(arg string, n int64) bool {
	before := in.bytes
	in.bytes += n
	if in.bytes > readlimit.Import {
		if before <= readlimit.Import {
			in.problem("%v (all its files together)", &readlimit.TooLargeError{Name: arg, Limit: readlimit.Import})
		}
		return false
	}
	return true
}

// ReadStdin reads standard input (or any reader) up to readlimit.Import
// bytes and parses it as file name.
func (in *Input) ReadStdin(r io.Reader, name string) error {
	data, err := readlimit.ReadAll(r, name, readlimit.Import)
	if err != nil {
		in.problem("%v", err)
		return in.Err()
	}
	in.parse(name, "stdin", data)
	return in.Err()
}

// Parse adds the Applications of one file's content; the error lists
// every problem found in it (and before it, in this Input).
func (in *Input) Parse(file, folder string, data []byte) error {
	in.parse(file, folder, data)
	return in.Err()
}

// helmSyntax is Go template syntax only Helm charts use: actions at the
// start of a line, and Helm's built-in objects. An ApplicationSet's own
// templates ({{name}}, {{ .values.x }}) do not match.
var helmSyntax = regexp.MustCompile(`^\s*\{\{-?\s*(if|else|end|range|with|define|include|template|toYaml|tpl|\$|/\*)|\{\{-?[^}]*\.(Values|Release|Chart|Capabilities|Files|Template)\b`)

// helmLine is the first line (1-based) with Helm template syntax, or 0.
func helmLine(data []byte) int {
	for i, line := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(line, []byte("{{")) && helmSyntax.Match(line) {
			return i + 1
		}
	}
	return 0
}

// Size is the number of bytes parsed: every file, stdin, and what
// Kustomize built.
func (in *Input) Size() int64 { return in.size }

func (in *Input) parse(file, folder string, data []byte) {
	in.size += int64(len(data))
	if n := helmLine(data); n > 0 {
		in.problem("%s:%d: Helm template syntax ({{ ... }}): render it first: helm template %s | deployctl import -", file, n, chartOf(file))
		return
	}
	if !in.parseList(file, folder, data) {
		in.parseDocuments(file, folder, data)
	}
}

// parseDocuments parses each YAML document whole.
func (in *Input) parseDocuments(file, folder string, data []byte) {
	dec := safeyaml.NewDecoderWith(data, &in.aliases)
	for {
		doc, err := dec.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			line, msg := safeyaml.Located(err)
			if bytes.Contains(data, []byte("{{")) {
				msg += " (template syntax {{ ... }} in the file: if it is a Helm template, render it first: helm template CHART | deployctl import -)"
			}
			in.problem("%s: YAML: %s", at(file, line), msg)
			return // the rest of the file cannot be read after a syntax error
		}
		if len(doc.Content) == 0 {
			continue
		}
		n := doc.Content[0]
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			continue // an empty document (Helm's "---" between templates)
		}
		in.object(file, folder, n, "")
	}
}

func at(file string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return file
}

// chartOf is the Helm chart a template file belongs to: the nearest folder
// above it with Chart.yaml, else a placeholder.
func chartOf(file string) string {
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		if isFile(filepath.Join(dir, "Chart.yaml")) {
			return dir
		}
		if parent := filepath.Dir(dir); parent == dir {
			return "CHART"
		}
	}
}

// object classifies one YAML object: an Application, a List of objects,
// an ApplicationSet, another Kubernetes object, or no Kubernetes object.
func (in *Input) object(file, folder string, n *yaml.Node, where string) {
	line := n.Line
	if n.Kind != yaml.MappingNode && where != "" {
		in.problem("%s:%d%s: not an object (a %s)", file, line, where, nodeKind(n))
		return
	}
	if n.Kind != yaml.MappingNode {
		in.NotObjects = append(in.NotObjects, fmt.Sprintf("%s:%d%s: not a Kubernetes object (a %s)", file, line, where, nodeKind(n)))
		return
	}
	obj, ok := listHead(n)
	if !ok {
		if err := n.Decode(&obj); err != nil {
			in.problem("%s:%d%s: %s", file, line, where, yamlErr(err))
			return
		}
	}
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	name := ""
	if md, ok := obj["metadata"].(map[string]any); ok {
		name, _ = md["name"].(string)
	}
	if items := yamlnode.Get(n, "items"); items != nil && strings.HasSuffix(kind, "List") {
		if items.Kind != yaml.SequenceNode {
			in.problem("%s:%d%s: %s items: not a list", file, items.Line, where, kind)
			return
		}
		for i, it := range items.Content {
			in.object(file, folder, it, fmt.Sprintf("%s items[%d]", where, i))
		}
		return
	}
	group, _, _ := strings.Cut(apiVersion, "/")
	switch {
	case kind == "" || apiVersion == "":
		in.NotObjects = append(in.NotObjects, fmt.Sprintf("%s:%d%s: no apiVersion and kind (Helm values or other YAML, not a Kubernetes object)", file, line, where))
		return
	case group == "argoproj.io" && kind == "ApplicationSet":
		generated, why := expandList(obj)
		if why != "" {
			in.AppSets = append(in.AppSets, fmt.Sprintf("%s (%s:%d; not expanded: %s)", name, file, line, why))
			return
		}
		var names []string
		for _, g := range generated {
			if in.application(file, line, folder, where, g, n) {
				names = append(names, g["metadata"].(map[string]any)["name"].(string))
			}
		}
		in.Expanded = append(in.Expanded, fmt.Sprintf("%s (%s:%d) → %s", name, file, line, strings.Join(names, ", ")))
		return
	case group != "argoproj.io" || kind != "Application":
		in.Skipped = append(in.Skipped, fmt.Sprintf("%s (%s:%d)", strings.TrimSpace(kind+" "+name), file, line))
		return
	}
	in.application(file, line, folder, where, obj, n)
}

// listHead decodes a List without its items, which are decoded one by one
// as objects of their own: decoding the whole List as well would hold every
// item twice (a dump of 10,000 Applications, hundreds of MB). It is the
// same as decoding the whole List when that succeeds; false (decode the
// whole List, for its errors) when n is no List or a part does not decode.
func listHead(n *yaml.Node) (map[string]any, bool) {
	k := yamlnode.Get(n, "kind")
	if k == nil || k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" || !strings.HasSuffix(k.Value, "List") {
		return nil, false
	}
	head := *n
	head.Content = nil
	var items *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "items" {
			if items != nil {
				return nil, false // a duplicate key: the whole List's error
			}
			items = n.Content[i+1]
			continue
		}
		head.Content = append(head.Content, n.Content[i], n.Content[i+1])
	}
	if items == nil || items.Kind != yaml.SequenceNode {
		return nil, false
	}
	var obj map[string]any
	if err := head.Decode(&obj); err != nil {
		return nil, false
	}
	for _, it := range items.Content {
		var item any
		if err := it.Decode(&item); err != nil {
			return nil, false
		}
	}
	return obj, true
}

// application adds one Application object (n is its YAML, for the line of
// a field that does not decode); false if it is not a valid one.
func (in *Input) application(file string, line int, folder, where string, obj map[string]any, n *yaml.Node) bool {
	name := ""
	if md, ok := obj["metadata"].(map[string]any); ok {
		name, _ = md["name"].(string)
	}
	// Status is the server's, ignored: not decoded into App, not kept.
	typed := maps.Clone(obj)
	delete(typed, "status")
	raw, err := json.Marshal(typed)
	if err != nil {
		in.problem("%s:%d%s: Application %s: %v", file, line, where, name, err)
		return false
	}
	var app appv1.Application
	var v3 V3
	for _, into := range []any{&app, &v3} {
		if err := json.Unmarshal(raw, into); err != nil {
			l := line
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field != "" {
				if fn := nodeAt(n, te.Field); fn != nil {
					l = fn.Line
				}
				err = fmt.Errorf("%s: want %s, not a %s", te.Field, te.Type, te.Value)
			}
			in.problem("%s:%d%s: not a valid Application %s: %v", file, l, where, name, err)
			return false
		}
	}
	if app.Name == "" {
		in.problem("%s:%d%s: an Application without metadata.name", file, line, where)
		return false
	}
	if app.Spec.Source == nil && len(app.Spec.Sources) == 0 && app.Spec.SourceHydrator == nil {
		in.problem("%s:%d%s: Application %s has no spec.source or spec.sources: if it is a Kustomize patch, import what the kustomization "+
			"that uses it builds (its folder, or kustomize build DIR | deployctl import -); else give it a source", file, line, where, name)
		return false
	}
	if why := appdiff.Invalid(obj); len(why) > 0 {
		in.problem("%s:%d%s: not a valid Application %s, Kubernetes refuses it: %s", file, line, where, name, strings.Join(why, "; "))
		return false
	}
	view, err := json.Marshal(appdiff.Comparable(obj, nil, nil))
	if err != nil {
		in.problem("%s:%d%s: Application %s: %v", file, line, where, name, err)
		return false
	}
	m := Manifest{File: file, Line: line, Folder: folder, Raw: view, App: &app}
	if v3.set() {
		m.V3 = &v3
	}
	in.Apps = append(in.Apps, m)
	return true
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	}
	return "value"
}

// yamlErr drops yaml.v3's "yaml: unmarshal errors:" heading; its lines are
// the file's ("line 9: mapping key "x" already defined at line 8").
func yamlErr(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return strings.Join(dedupKeyErrors(te.Errors), "; ")
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

var dupKey = regexp.MustCompile(`^line (\d+): mapping key "(.*)" already defined at line \d+$`)

// dedupKeyErrors keeps one message per repeated key: yaml.v3 reports a key
// seen n times against every earlier occurrence, n² lines for files
// concatenated without "---" (cat *.yaml). Such a file gets a hint.
func dedupKeyErrors(msgs []string) []string {
	seen := map[string]bool{}
	var out []string
	unseparated := false
	for _, m := range msgs {
		if d := dupKey.FindStringSubmatch(m); d != nil {
			if seen[d[1]+"\x00"+d[2]] {
				continue
			}
			seen[d[1]+"\x00"+d[2]] = true
			unseparated = unseparated || d[2] == "apiVersion"
		}
		out = append(out, m)
	}
	if unseparated {
		out = append(out, `apiVersion repeats in one document: were files joined without a "---" line between them?`)
	}
	return out
}

// nodeAt finds a dotted field path ("spec.source.helm") below m, as far as
// it goes.
func nodeAt(m *yaml.Node, path string) *yaml.Node {
	found := m
	for _, k := range strings.Split(path, ".") {
		c := yamlnode.Get(found, k)
		if c == nil {
			break
		}
		found = c
	}
	return found
}

// check runs once everything is read: the same Application twice is kept
// once when both say the same (a Git file and a live dump), a problem when
// they differ; and an input without Applications says what it held.
func (in *Input) Check() error {
	byKey := map[string]int{}
	var kept []Manifest
	for _, m := range in.Apps {
		key := m.App.Namespace + "/" + m.App.Name
		i, ok := byKey[key]
		if !ok {
			byKey[key] = len(kept)
			kept = append(kept, m)
			continue
		}
		prev := kept[i]
		var d []appdiff.Difference
		appdiff.Diff(key, "", appdiff.Prune(prev.View()), appdiff.Prune(m.View()), &d)
		if len(d) == 0 {
			in.twice = append(in.twice, fmt.Sprintf("%s (%s and %s)", key, prev.Where(), m.Where()))
			continue
		}
		var fields []string
		for _, x := range d {
			fields = append(fields, x.Field)
		}
		in.problem("%s: Application %s, read before at %s, differs from it in %s: keep one of the two",
			m.Where(), key, prev.Where(), strings.Join(fields, ", "))
	}
	in.Apps = kept
	if err := in.Err(); err != nil {
		return err
	}
	if len(in.Apps) == 0 {
		msg := "no Argo CD Application found in the input"
		if len(in.AppSets) > 0 {
			msg += fmt.Sprintf("; %s (%s) generate their Applications in the cluster, and those are not in the input: "+
				"import them from there: kubectl get applications -A -o yaml | deployctl import -",
				words.Plural(len(in.AppSets), "ApplicationSet"), words.Summarize(in.AppSets, 8))
		}
		for _, u := range in.unreadSorted() {
			msg += "; " + u
		}
		if len(in.Skipped) > 0 {
			msg += "; not Applications: " + words.Summarize(in.Skipped, 8)
		}
		if len(in.NotObjects) > 0 {
			msg += "; not Kubernetes objects: " + words.Summarize(in.NotObjects, 8)
		}
		return errors.New(msg)
	}
	return nil
}

// notes say what the input held besides Applications.
func (in *Input) Notes() []string {
	var out []string
	if len(in.twice) > 0 {
		out = append(out, "read twice, the same both times, kept once: "+strings.Join(in.twice, ", "))
	}
	if len(in.Built) > 0 {
		out = append(out, "built with Kustomize, its output read instead of its files: "+strings.Join(in.Built, ", "))
	}
	out = append(out, in.unreadSorted()...)
	if len(in.Expanded) > 0 {
		out = append(out, fmt.Sprintf("%s expanded into their Applications as Argo CD's ApplicationSet controller makes them "+
			"(List generator, {{key}} templates): %s", words.Plural(len(in.Expanded), "ApplicationSet"), words.Summarize(in.Expanded, 8)))
	}
	if len(in.AppSets) > 0 {
		out = append(out, fmt.Sprintf("%s: the Applications they generate are not in the input and are not imported; "+
			"to import them, dump them from the cluster: kubectl get applications -A -o yaml > apps.yaml, then deployctl import apps.yaml: %s",
			words.Plural(len(in.AppSets), "ApplicationSet"), words.Summarize(in.AppSets, 8)))
	}
	if len(in.Skipped) > 0 {
		out = append(out, "not Applications, left out: "+words.Summarize(in.Skipped, 8))
	}
	if len(in.NotObjects) > 0 {
		out = append(out, "not Kubernetes objects, left out: "+words.Summarize(in.NotObjects, 8))
	}
	return out
}
