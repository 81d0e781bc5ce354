package receiver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/importer"
	"github.com/deployctl/deployctl/pkg/importer/appread"
)

// deployctlRefuses imports one Application alone, as `deployctl import`
// does (its read, its spec's rules, its self-check): nil when it imports.
func deployctlRefuses(t *testing.T, obj map[string]any) error {
	_, err := deployctlImport(t, obj)
	return err
}

// deployctlImport is the import of one Application alone.
func deployctlImport(t *testing.T, obj map[string]any) (*importer.Result, error) {
	t.Helper()
	raw, _ := json.Marshal(obj)
	f := filepath.Join(t.TempDir(), "app.json")
	if err := os.WriteFile(f, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := appread.Read([]string{f})
	if err != nil {
		return nil, err
	}
	return importer.Import(in, importer.Options{Name: "p", StackFrom: importer.StackFrom{Kind: "parent"}})
}

// disagreement compares both verdicts on one Application; "" when they agree.
func disagreement(t *testing.T, what string, obj map[string]any) string {
	argo := argoCDRefuses(t, obj)
	ours := deployctlRefuses(t, obj)
	switch {
	case len(argo) == 0 && ours != nil:
		return fmt.Sprintf("%s: Argo CD accepts, deployctl refuses: %v", what, firstLine(ours.Error()))
	case len(argo) > 0 && ours == nil:
		return fmt.Sprintf("%s: deployctl accepts, Argo CD refuses: %s", what, strings.Join(argo, "; "))
	}
	return ""
}

func firstLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// Every Application of every import fixture is accepted or refused by
// deployctl exactly as by Argo CD and Kubernetes.
func TestFixturesAgreeWithArgoCD(t *testing.T) {
	applicationCRD(t)
	entries, err := os.ReadDir("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	var diffs []string
	n := 0
	for _, e := range entries {
		in, err := appread.Read([]string{filepath.Join("../testdata", e.Name())})
		if err != nil {
			continue // a fixture of the reader's refusals: no Application to judge
		}
		for _, m := range in.Apps {
			n++
			obj := m.View()
			obj["apiVersion"], obj["kind"] = "argoproj.io/v1alpha1", "Application"
			if d := disagreement(t, fmt.Sprintf("%s (%s)", m.App.Name, m.File), obj); d != "" {
				diffs = append(diffs, d)
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d fixture Applications read", n)
	}
	if len(diffs) > 0 {
		t.Errorf("%d of %d fixture Applications judged otherwise than by Argo CD:\n%s", len(diffs), n, strings.Join(diffs, "\n"))
	}
	t.Logf("%d fixture Applications, %d disagreements", n, len(diffs))
}

// base is a valid Application with every field the variants change.
const base = `{
 "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
 "metadata": {"name": "web", "namespace": "argocd", "labels": {"team": "web"}, "annotations": {"owner": "web"}},
 "spec": {
  "project": "default",
  "destination": {"server": "https://kubernetes.default.svc", "namespace": "web"},
  "source": {"repoURL": "https://git.example.com/p.git", "targetRevision": "main", "path": "web", "tagPrefix": "web/",
   "helm": {"valueFiles": ["values.yaml"], "values": "a: 1", "namespace": "web", "version": "v3", "kubeVersion": "1.30.0"},
   "kustomize": {"namePrefix": "a-", "images": ["nginx:1"], "namespace": "web", "commonLabels": {"team": "web"}, "commonAnnotations": {"owner": "web"},
    "ignoreMissingComponents": true, "labelIncludeTemplates": true},
   "directory": {"include": "*.yaml", "exclude": "x/*", "disableExtensionFilter": true},
   "plugin": {"name": "envsubst", "env": [{"name": "A", "value": "b"}]}},
  "syncPolicy": {"syncOptions": ["CreateNamespace=true"], "automated": {"enabled": false, "prune": true}, "retry": {"limit": 1, "refresh": true},
   "managedNamespaceMetadata": {"labels": {"team": "web"}, "annotations": {"owner": "web"}}},
  "ignoreDifferences": [{"group": "apps", "kind": "Deployment", "name": "web", "namespace": "web",
   "jsonPointers": ["/spec/replicas"], "jqPathExpressions": [".spec.replicas"], "managedFieldsManagers": ["kube-controller-manager"]}],
  "info": [{"name": "owner", "value": "web"}]
 }
}`

// values are what people and attackers write: Argo CD's wildcards, empty
// strings, unicode, newlines, quotes, template delimiters, long values.
var values = []string{"*", "apps*", "", "ünïcødé-ß", "a\nb", `a"b`, "a b", "${{ secrets.X }}", "{{x}}", "a,b", "-x", "x/", "../x", "/abs",
	strings.Repeat("x", 300), "team.example.com/x"}

// fields are the places the variants write a value: a path of keys into
// base; a last key of "=key" renames the map's one key instead.
var fields = [][]string{
	{"spec", "ignoreDifferences", "0", "group"}, {"spec", "ignoreDifferences", "0", "kind"},
	{"spec", "ignoreDifferences", "0", "name"}, {"spec", "ignoreDifferences", "0", "namespace"},
	{"spec", "ignoreDifferences", "0", "jsonPointers", "0"}, {"spec", "ignoreDifferences", "0", "jqPathExpressions", "0"},
	{"spec", "ignoreDifferences", "0", "managedFieldsManagers", "0"},
	{"spec", "source", "targetRevision"}, {"spec", "source", "tagPrefix"}, {"spec", "source", "helm", "valueFiles", "0"}, {"spec", "source", "helm", "values"},
	{"spec", "source", "helm", "namespace"}, {"spec", "source", "helm", "version"}, {"spec", "source", "helm", "kubeVersion"},
	{"spec", "source", "kustomize", "namePrefix"}, {"spec", "source", "kustomize", "images", "0"},
	{"spec", "source", "kustomize", "namespace"}, {"spec", "source", "kustomize", "commonLabels", "team"},
	{"spec", "source", "kustomize", "commonLabels", "=key"}, {"spec", "source", "kustomize", "commonAnnotations", "=key"},
	{"spec", "source", "directory", "include"}, {"spec", "source", "directory", "exclude"},
	{"spec", "source", "plugin", "name"}, {"spec", "source", "plugin", "env", "0", "value"},
	{"spec", "destination", "namespace"}, {"spec", "info", "0", "name"}, {"spec", "info", "0", "value"},
	{"spec", "syncPolicy", "syncOptions", "0"},
	{"spec", "syncPolicy", "managedNamespaceMetadata", "labels", "team"}, {"spec", "syncPolicy", "managedNamespaceMetadata", "labels", "=key"},
	{"spec", "syncPolicy", "managedNamespaceMetadata", "annotations", "=key"},
	{"metadata", "labels", "team"}, {"metadata", "labels", "=key"}, {"metadata", "annotations", "=key"},
	{"metadata", "name"}, {"metadata", "namespace"}, {"spec", "project"},
}

// nonEmpty are fields where "" meets a rule of Argo CD's Go validation
// (util/argo validateSourcePermissions: repoURL, and path or chart, are
// required), which cannot be called here (see argoCDRefuses).
var nonEmpty = [][]string{{"spec", "source", "repoURL"}, {"spec", "source", "path"}}

// setAny writes v at path in obj, or deletes the key when v is nil.
func setAny(obj any, path []string, v any) {
	parent := path[:len(path)-1]
	for _, k := range parent {
		switch o := obj.(type) {
		case map[string]any:
			obj = o[k]
		case []any:
			var n int
			fmt.Sscan(k, &n)
			obj = o[n]
		}
	}
	m := obj.(map[string]any)
	if v == nil {
		delete(m, path[len(path)-1])
		return
	}
	m[path[len(path)-1]] = v
}

// set writes v at path in obj (decoded JSON).
func set(obj any, path []string, v string) {
	for i, k := range path {
		last := i == len(path)-1
		switch o := obj.(type) {
		case map[string]any:
			if len(path) > i+1 && path[i+1] == "=key" {
				m := o[k].(map[string]any)
				for old, val := range m {
					delete(m, old)
					m[v] = val
				}
				return
			}
			if last {
				o[k] = v
				return
			}
			obj = o[k]
		case []any:
			var n int
			fmt.Sscan(k, &n)
			if last {
				o[n] = v
				return
			}
			obj = o[n]
		}
	}
}

// Generated variants of every modelled field are accepted or refused by
// deployctl exactly as by Argo CD and Kubernetes.
func TestVariantsAgreeWithArgoCD(t *testing.T) {
	applicationCRD(t)
	var baseObj map[string]any
	if err := json.Unmarshal([]byte(base), &baseObj); err != nil {
		t.Fatal(err)
	}
	if d := disagreement(t, "base", baseObj); d != "" || len(argoCDRefuses(t, baseObj)) > 0 {
		t.Fatalf("the base Application must be valid: %s %v", d, argoCDRefuses(t, baseObj))
	}
	var diffs, lost []string
	n := 0
	try := func(path []string, v string) {
		var obj map[string]any
		_ = json.Unmarshal([]byte(base), &obj)
		set(obj, path, v)
		n++
		what := fmt.Sprintf("%s = %q", strings.Join(path, "."), trim(v))
		if d := disagreement(t, what, obj); d != "" {
			diffs = append(diffs, d)
		}
		// Accepted, the value comes back from the spec file as it was
		// (quotes, newlines and delimiters do not break the spec's YAML).
		// A name that is no DNS label is renamed, and an Application
		// without a namespace is put in Argo CD's, on purpose (notes).
		if res, err := deployctlImport(t, obj); err == nil && path[1] != "name" && path[1] != "namespace" {
			for _, d := range res.Differences {
				lost = append(lost, fmt.Sprintf("%s: %s", what, d))
			}
		}
	}
	for _, f := range fields {
		for _, v := range values {
			try(f, v)
		}
	}
	for _, f := range nonEmpty {
		for _, v := range values {
			if v != "" {
				try(f, v)
			}
		}
	}
	// Shapes: a required field left out, a value of the wrong type.
	for _, c := range []struct {
		path []string
		v    any // nil: delete the key
	}{
		{[]string{"spec", "ignoreDifferences", "0", "kind"}, nil},
		{[]string{"spec", "project"}, nil},
		{[]string{"spec", "destination"}, nil},
		{[]string{"spec", "source", "repoURL"}, nil},
		{[]string{"spec", "info", "0", "value"}, nil},
		{[]string{"spec", "info", "0", "name"}, nil},
		{[]string{"spec", "source", "plugin", "env", "0", "value"}, nil},
		{[]string{"spec", "revisionHistoryLimit"}, "ten"},
		{[]string{"spec", "revisionHistoryLimit"}, -1.0},
		{[]string{"spec", "source", "helm", "valueFiles"}, "values.yaml"},
		{[]string{"spec", "source", "kustomize", "replicas"}, []any{map[string]any{"name": "web"}}},
		{[]string{"spec", "source", "kustomize", "replicas"}, []any{map[string]any{"name": "web", "count": "x"}}},
		{[]string{"spec", "source", "kustomize", "replicas"}, []any{map[string]any{"name": "web", "count": 2.0}}},
		{[]string{"spec", "source", "directory", "jsonnet"}, map[string]any{"extVars": []any{map[string]any{"name": "a"}}}},
		{[]string{"spec", "source", "helm", "valuesObject"}, []any{"a"}},
		{[]string{"spec", "source", "helm", "parameters"}, []any{map[string]any{"value": "1"}}},
		{[]string{"spec", "syncPolicy", "automated"}, map[string]any{"prune": "yes"}},
		{[]string{"spec", "syncPolicy", "retry"}, map[string]any{"limit": "3"}},
		// Argo CD 3's fields (the linked v2 type has no place for them:
		// their types are checked beside it).
		{[]string{"spec", "source", "tagPrefix"}, 5.0},
		{[]string{"spec", "source", "tagPrefix"}, nil},
		{[]string{"spec", "source", "kustomize", "ignoreMissingComponents"}, "yes"},
		{[]string{"spec", "source", "kustomize", "labelIncludeTemplates"}, 1.0},
		{[]string{"spec", "source", "directory", "disableExtensionFilter"}, "true"},
		{[]string{"spec", "syncPolicy", "automated"}, map[string]any{"enabled": "false"}},
		{[]string{"spec", "syncPolicy", "automated"}, map[string]any{"enabled": true, "selfHeal": true}},
		{[]string{"spec", "syncPolicy", "automated"}, map[string]any{"enabled": false}},
		{[]string{"spec", "syncPolicy", "retry"}, map[string]any{"refresh": "yes"}},
		{[]string{"spec", "syncPolicy", "retry"}, map[string]any{"refresh": true}},
	} {
		var obj map[string]any
		_ = json.Unmarshal([]byte(base), &obj)
		setAny(obj, c.path, c.v)
		n++
		if d := disagreement(t, fmt.Sprintf("%s = %v", strings.Join(c.path, "."), c.v), obj); d != "" {
			diffs = append(diffs, d)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Errorf("%d of %d variants judged otherwise than by Argo CD and Kubernetes:\n%s", len(diffs), n, strings.Join(diffs, "\n"))
	}
	if len(lost) > 0 {
		t.Errorf("%d accepted variants not reproduced:\n%s", len(lost), strings.Join(lost, "\n"))
	}
	t.Logf("%d variants, %d disagreements", n, len(diffs))
}

func trim(v string) string {
	if len(v) > 20 {
		return v[:20] + "…"
	}
	return v
}
