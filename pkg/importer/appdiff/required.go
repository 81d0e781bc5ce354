package appdiff

import (
	"fmt"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
)

// Invalid says why Kubernetes refuses an Application (as read, JSON, not
// pruned): its name is not a DNS subdomain (the rule for a custom
// resource's name), or a key the CRD requires is missing. Empty when it
// would be created.
func Invalid(obj map[string]any) []string {
	var out []string
	md, _ := obj["metadata"].(map[string]any)
	if name, _ := md["name"].(string); name != "" {
		for _, m := range apivalidation.NameIsDNSSubdomain(name, false) {
			out = append(out, fmt.Sprintf("metadata.name %q: %s", name, m))
		}
	}
	for _, f := range MissingRequired(obj) {
		out = append(out, "no "+f+" (Argo CD's Application CRD requires it)")
	}
	return out
}

// requiredKeys are the keys Argo CD's Application CRD requires (v3.6),
// where the typed Application cannot tell them from empty: an Application
// without one is refused by Kubernetes, so the import refuses it too (the
// receiver differential test, pkg/importer/receiver, holds this list
// against the CRD). "[]" steps into each item of a list.
var requiredKeys = []struct {
	at   []string
	keys []string
}{
	{[]string{"spec"}, []string{"destination", "project"}},
	{[]string{"spec", "ignoreDifferences", "[]"}, []string{"kind"}},
	{[]string{"spec", "info", "[]"}, []string{"name", "value"}},
	{[]string{"spec", "source"}, []string{"repoURL"}},
	{[]string{"spec", "sources", "[]"}, []string{"repoURL"}},
	{[]string{"spec", "source", "directory", "jsonnet", "extVars", "[]"}, []string{"name", "value"}},
	{[]string{"spec", "source", "directory", "jsonnet", "tlas", "[]"}, []string{"name", "value"}},
	{[]string{"spec", "source", "kustomize", "replicas", "[]"}, []string{"name", "count"}},
	{[]string{"spec", "source", "plugin", "env", "[]"}, []string{"name", "value"}},
	{[]string{"spec", "sources", "[]", "directory", "jsonnet", "extVars", "[]"}, []string{"name", "value"}},
	{[]string{"spec", "sources", "[]", "directory", "jsonnet", "tlas", "[]"}, []string{"name", "value"}},
	{[]string{"spec", "sources", "[]", "kustomize", "replicas", "[]"}, []string{"name", "count"}},
	{[]string{"spec", "sources", "[]", "plugin", "env", "[]"}, []string{"name", "value"}},
}

// MissingRequired names the required keys an Application (as read, JSON,
// not pruned) leaves out, as field paths.
func MissingRequired(obj map[string]any) []string {
	var out []string
	var walk func(v any, path string, at, keys []string)
	walk = func(v any, path string, at, keys []string) {
		if len(at) == 0 {
			m, ok := v.(map[string]any)
			if !ok {
				return
			}
			for _, k := range keys {
				if _, ok := m[k]; !ok {
					out = append(out, path+"."+k)
				}
			}
			return
		}
		if at[0] == "[]" {
			l, _ := v.([]any)
			for i, e := range l {
				walk(e, fmt.Sprintf("%s[%d]", path, i), at[1:], keys)
			}
			return
		}
		m, _ := v.(map[string]any)
		if e, ok := m[at[0]]; ok && e != nil {
			walk(e, strings.TrimPrefix(path+"."+at[0], "."), at[1:], keys)
		}
	}
	for _, r := range requiredKeys {
		walk(obj, "", r.at, r.keys)
	}
	return out
}
