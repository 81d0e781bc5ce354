// Package appdiff compares Argo CD Applications as Argo CD reads them:
// empty values mean "not set", and a difference is named by its field path.
// The import's reader uses it to tell an Application read twice from two
// that differ, and its round trip to find what the spec cannot express.
package appdiff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"

	"github.com/deployctl/deployctl/internal/redact"
)

// Difference is one field in which an app's generated Application differs
// from the original: something the spec cannot express.
type Difference struct {
	App   string `json:"app"`
	Field string `json:"field"`
	// Original and Generated are compact JSON; "" when absent.
	Original  string `json:"original,omitempty"`
	Generated string `json:"generated,omitempty"`
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: %s → %s", d.Field, orAbsent(d.Original), orAbsent(d.Generated))
}

func orAbsent(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}

// Dropped reports whether key is in list, or under a prefix in it (an
// entry ending in "/").
func Dropped(key string, list []string) bool {
	for _, d := range list {
		if key == d || (strings.HasSuffix(d, "/") && strings.HasPrefix(key, d)) {
			return true
		}
	}
	return false
}

// Comparable is the part of an Application that is compared, normalized
// (JSON types, no empty values), without the given labels and annotations
// (none: the whole Application as a person wrote it, without status and
// server-side metadata).
func Comparable(obj map[string]any, dropLabels, dropAnn []string) any {
	md, _ := obj["metadata"].(map[string]any)
	v := map[string]any{
		"spec": argoSpec(obj["spec"]),
		"metadata": map[string]any{
			"name":        md["name"],
			"namespace":   md["namespace"],
			"labels":      without(md["labels"], dropLabels),
			"annotations": without(md["annotations"], dropAnn),
		},
	}
	raw, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(raw, &out)
	return Prune(out)
}

// DefaultRevisionHistoryLimit is Argo CD's: an Application that sets it
// says what one without it means.
const DefaultRevisionHistoryLimit = appv1.RevisionHistoryLimit

// argoSpec is an Application spec as Argo CD reads it: without source when
// sources is set (Argo CD ignores it), without a revisionHistoryLimit equal
// to Argo CD's default, and with an empty project as the one Argo CD reads
// (ApplicationSpec.GetProject: "default").
func argoSpec(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	if srcs, _ := m["sources"].([]any); len(srcs) > 0 {
		delete(out, "source")
	}
	if l, ok := m["revisionHistoryLimit"].(float64); ok && l == DefaultRevisionHistoryLimit {
		delete(out, "revisionHistoryLimit")
	}
	if p, _ := m["project"].(string); p == "" {
		out["project"] = appv1.DefaultAppProjectName
	}
	return out
}

func without(m any, drop []string) map[string]any {
	in, _ := m.(map[string]any)
	out := map[string]any{}
	for k, v := range in {
		if !Dropped(k, drop) {
			out[k] = v
		}
	}
	return out
}

// offSwitches are the booleans whose false is not Argo CD's default:
// Argo CD 3's `automated: {enabled: false}` turns automated sync off.
var offSwitches = map[string]bool{"enabled": true}

// presence are the Application fields whose empty object still means
// something to Argo CD: `automated: {}` turns automated sync on, and
// `managedNamespaceMetadata: {}` has Argo CD manage the namespace's
// metadata.
var presence = map[string]bool{"automated": true, "managedNamespaceMetadata": true}

// Prune drops empty values, recursively; nil when v itself is empty. An
// empty presence field stays (as {}), and an off switch's false.
func Prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if p := Prune(e); p != nil {
				out[k] = p
			} else if _, isMap := e.(map[string]any); isMap && presence[k] {
				out[k] = map[string]any{}
			} else if b, isBool := e.(bool); isBool && !b && offSwitches[k] {
				out[k] = false
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(x) == 0 {
			return nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Prune(e)
		}
		return out
	case string:
		if x == "" {
			return nil
		}
	case bool:
		if !x {
			return nil
		}
	}
	return v
}

// Diff records the paths where want and got differ: into objects key by
// key, into lists of the same length item by item.
func Diff(app, path string, want, got any, out *[]Difference) {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if wok && gok {
		keys := map[string]bool{}
		for k := range wm {
			keys[k] = true
		}
		for k := range gm {
			keys[k] = true
		}
		sortedKeys := make([]string, 0, len(keys))
		for k := range keys {
			sortedKeys = append(sortedKeys, k)
		}
		sort.Strings(sortedKeys)
		for _, k := range sortedKeys {
			Diff(app, join(path, k), wm[k], gm[k], out)
		}
		return
	}
	wl, wok := want.([]any)
	gl, gok := got.([]any)
	if wok && gok && len(wl) == len(gl) {
		for i := range wl {
			Diff(app, fmt.Sprintf("%s[%d]", path, i), wl[i], gl[i], out)
		}
		return
	}
	if !reflect.DeepEqual(want, got) {
		*out = append(*out, Difference{App: app, Field: path, Original: compact(want), Generated: compact(got)})
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	if strings.ContainsAny(key, "./") {
		return fmt.Sprintf("%s[%q]", path, key)
	}
	return path + "." + key
}

func compact(v any) string {
	if v == nil {
		return ""
	}
	raw, _ := json.Marshal(v)
	return redact.Snippet(string(raw), 160)
}
