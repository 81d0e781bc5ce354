package appread

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"

	"github.com/deployctl/deployctl/pkg/importer/appdiff"
)

// expandList returns the Applications an ApplicationSet generates when it
// is one the import can expand exactly: a single List generator (elements,
// no selector, no template of its own), Argo CD's default templates
// (goTemplate off: fasttemplate's {{key}}), no templatePatch. It follows
// Argo CD 2.14's ApplicationSet controller step by step: each list element
// gives the parameters (string values, and values.KEY for its "values"
// map); every string and map key of the template has its {{key}} tags
// replaced (unknown tags stay as written); the resources finalizer is added
// when the template has no finalizer and preserveResourcesOnDeletion is
// off; the Application is in the ApplicationSet's namespace. Otherwise it
// says why it does not expand.
func expandList(obj map[string]any) ([]map[string]any, string) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err.Error()
	}
	var set appv1.ApplicationSet
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, "not a valid ApplicationSet: " + err.Error()
	}
	s := set.Spec
	switch {
	case s.GoTemplate:
		return nil, "goTemplate: only Argo CD's default {{key}} templates are expanded"
	case s.TemplatePatch != nil:
		return nil, "templatePatch is not expanded"
	case len(s.Generators) != 1 || s.Generators[0].List == nil:
		return nil, "only a single List generator is expanded"
	}
	g := s.Generators[0]
	if g.Selector != nil || len(g.List.ElementsYaml) > 0 || !isZeroTemplate(&g.List.Template) || !onlyList(g) {
		return nil, "only a List generator of plain elements is expanded (no selector, elementsYaml or template of its own)"
	}
	// The template as Argo CD's typed Application holds it.
	tmplRaw, err := json.Marshal(map[string]any{
		"metadata": map[string]any{
			"name": s.Template.Name, "namespace": s.Template.Namespace, "labels": s.Template.Labels,
			"annotations": s.Template.Annotations, "finalizers": s.Template.Finalizers,
		},
		"spec": s.Template.Spec,
	})
	if err != nil {
		return nil, err.Error()
	}
	var out []map[string]any
	for i, el := range g.List.Elements {
		var element map[string]any
		if err := json.Unmarshal(el.Raw, &element); err != nil {
			return nil, fmt.Sprintf("list element %d is not an object (Argo CD refuses it)", i)
		}
		params := map[string]string{}
		for k, v := range element {
			if k == "values" {
				vals, ok := v.(map[string]any)
				if !ok {
					return nil, fmt.Sprintf("list element %d: values is not a map (Argo CD refuses it)", i)
				}
				for vk, vv := range vals {
					s, ok := vv.(string)
					if !ok {
						return nil, fmt.Sprintf("list element %d: values.%s is not a string (Argo CD refuses it)", i, vk)
					}
					params["values."+vk] = s
				}
				continue
			}
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Sprintf("list element %d: %s is not a string (Argo CD refuses it)", i, k)
			}
			params[k] = s
		}
		var app map[string]any
		_ = json.Unmarshal(tmplRaw, &app)
		if len(params) > 0 {
			r, err := replaceAll(app, params)
			if err != nil {
				return nil, fmt.Sprintf("list element %d: %v", i, err)
			}
			app = r.(map[string]any)
			md := app["metadata"].(map[string]any)
			if f, _ := md["finalizers"].([]any); len(f) == 0 && (s.SyncPolicy == nil || !s.SyncPolicy.PreserveResourcesOnDeletion) {
				md["finalizers"] = []any{"resources-finalizer.argocd.argoproj.io"}
			}
		}
		if left := unresolved(app); left != "" {
			return nil, fmt.Sprintf("list element %d leaves %s unresolved", i, left)
		}
		md := app["metadata"].(map[string]any)
		md["namespace"] = set.Namespace
		md["ownerReferences"] = []any{map[string]any{
			"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "name": set.Name, "controller": true, "blockOwnerDeletion": true,
		}}
		app["apiVersion"], app["kind"] = "argoproj.io/v1alpha1", "Application"
		out = append(out, app)
	}
	return out, ""
}

func isZeroTemplate(t *appv1.ApplicationSetTemplate) bool {
	if t == nil {
		return true
	}
	raw, _ := json.Marshal(t)
	var v any
	_ = json.Unmarshal(raw, &v)
	return appdiff.Prune(v) == nil
}

// onlyList: the generator says nothing but list.
func onlyList(g appv1.ApplicationSetGenerator) bool {
	raw, _ := json.Marshal(g)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	for k, v := range m {
		if k != "list" && appdiff.Prune(v) != nil {
			return false
		}
	}
	return true
}

// isTemplated is Argo CD's test for a string with a template in it.
var isTemplated = regexp.MustCompile(".*{{.*}}.*")

// fasttemplate replaces {{tag}} with params[trimmed tag], leaving unknown
// tags as written, as Argo CD's renderer does with valyala/fasttemplate; a
// {{ without }} is an error.
func fasttemplate(s string, params map[string]string) (string, error) {
	if !isTemplated.MatchString(s) {
		return s, nil
	}
	var b strings.Builder
	for rest := s; ; {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:i])
		rest = rest[i+2:]
		j := strings.Index(rest, "}}")
		if j < 0 {
			return "", fmt.Errorf("invalid template %q: {{ without }}", s)
		}
		tag := rest[:j]
		rest = rest[j+2:]
		if v, ok := params[strings.TrimSpace(tag)]; ok && strings.TrimSpace(tag) != "" {
			b.WriteString(v)
		} else {
			b.WriteString("{{" + tag + "}}")
		}
	}
}

// replaceAll templates every string and map key of v.
func replaceAll(v any, params map[string]string) (any, error) {
	switch x := v.(type) {
	case string:
		return fasttemplate(x, params)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := replaceAll(e, params)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if x[k] == nil {
				continue
			}
			r, err := replaceAll(x[k], params)
			if err != nil {
				return nil, err
			}
			nk, err := fasttemplate(k, params)
			if err != nil {
				return nil, err
			}
			out[nk] = r
		}
		return out, nil
	}
	return v, nil
}

// unresolved is the first {{tag}} left in v, or "".
func unresolved(v any) string {
	switch x := v.(type) {
	case string:
		if i := strings.Index(x, "{{"); i >= 0 && strings.Contains(x[i:], "}}") {
			return x[i : i+strings.Index(x[i:], "}}")+2]
		}
	case []any:
		for _, e := range x {
			if s := unresolved(e); s != "" {
				return s
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if s := unresolved(k); s != "" {
				return s
			}
			if s := unresolved(x[k]); s != "" {
				return s
			}
		}
	}
	return ""
}
