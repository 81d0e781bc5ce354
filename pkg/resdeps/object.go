// Package resdeps infers the real dependencies between Argo CD Applications
// from the resources they deploy: an app that creates a Certificate needs
// the app that deploys the Certificate CRD, a PVC needs the app that
// deploys its StorageClass, and so on (rules.go holds the table). Input is
// each app's objects, rendered (ReadDir) or live; output is edges
// consumer → provider, each with the evidence that makes it.
package resdeps

import (
	"fmt"
	"sort"
	"strings"
)

// App is one Argo CD Application and the objects it deploys.
type App struct {
	Name string
	// Namespace is the Application's destination namespace: where its
	// namespaced objects without metadata.namespace go.
	Namespace string
	// CreatesNamespace: the sync option CreateNamespace=true, so the app
	// makes its destination namespace itself.
	CreatesNamespace bool
	Objects          []Object
}

// Object is one Kubernetes object as rendered or live: the whole object,
// read only through the accessors below.
type Object struct {
	Obj map[string]any
	// File and Line say where it was read ("" and 0 for live objects).
	File string
	Line int
}

// Where is file:line, or the object's identity for live objects.
func (o Object) Where() string {
	if o.File == "" {
		return o.String()
	}
	if o.Line > 0 {
		return fmt.Sprintf("%s:%d", o.File, o.Line)
	}
	return o.File
}

// String is "Kind namespace/name" (or "Kind name").
func (o Object) String() string {
	if ns := o.Namespace(); ns != "" {
		return o.Kind() + " " + ns + "/" + o.Name()
	}
	return o.Kind() + " " + o.Name()
}

func (o Object) Kind() string       { return str(o.Obj, "kind") }
func (o Object) APIVersion() string { return str(o.Obj, "apiVersion") }
func (o Object) Name() string       { return str(o.Obj, "metadata", "name") }
func (o Object) Namespace() string  { return str(o.Obj, "metadata", "namespace") }

// Group is the API group of apiVersion ("" for the core group).
func (o Object) Group() string {
	g, _, ok := strings.Cut(o.APIVersion(), "/")
	if !ok {
		return ""
	}
	return g
}

func (o Object) Annotation(k string) string { return str(o.Obj, "metadata", "annotations", k) }

// Labels are metadata.labels (string values only).
func (o Object) Labels() map[string]string { return strMap(at(o.Obj, "metadata", "labels")) }

// at walks maps by key; nil when a step is missing or not a map.
func at(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// str is the string at path, "" if absent or not a string.
func str(v any, path ...string) string {
	s, _ := at(v, path...).(string)
	return s
}

// has says whether path is present (null included).
func has(v any, path ...string) bool {
	if len(path) == 0 {
		return true
	}
	m, ok := at(v, path[:len(path)-1]...).(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[path[len(path)-1]]
	return ok
}

func list(v any, path ...string) []any {
	l, _ := at(v, path...).([]any)
	return l
}

func strList(v any, path ...string) []string {
	var out []string
	for _, x := range list(v, path...) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func strMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Synced says whether a successful sync applies o, as gitops-engine reads
// the hook annotations (pkg/sync/hook): not an object marked only
// argocd.argoproj.io/hook: Skip, not a hook of no phase it runs (a Helm
// test hook, helm.sh/hook: test), not one that runs only when a sync fails.
func (o Object) Synced() bool {
	argo, isArgo := at(o.Obj, "metadata", "annotations", "argocd.argoproj.io/hook").(string)
	var phases []string
	if isArgo {
		for _, p := range csv(argo) {
			switch p {
			case "PreSync", "Sync", "PostSync", "SyncFail", "Skip":
				phases = append(phases, p)
			}
		}
		if len(phases) == 1 && phases[0] == "Skip" {
			return false
		}
	}
	if len(phases) == 0 { // Argo CD ignores Helm's hooks when it has its own
		helm, isHelm := at(o.Obj, "metadata", "annotations", "helm.sh/hook").(string)
		if !isArgo && (!isHelm || helm == "crd-install") {
			return true // not a hook: a resource of the sync
		}
		for _, p := range csv(helm) {
			switch p {
			case "pre-install", "pre-upgrade":
				phases = append(phases, "PreSync")
			case "post-install", "post-upgrade":
				phases = append(phases, "PostSync")
			}
		}
	}
	for _, p := range phases {
		if p != "SyncFail" && p != "Skip" {
			return true
		}
	}
	return false
}

func csv(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
