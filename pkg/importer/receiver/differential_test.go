package receiver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// judgement is one Application to judge, and what it is.
type judgement struct {
	what string
	obj  map[string]any
}

// disagreements judges every Application by Argo CD (its CRD, its
// create-time Go validation when given: argoCDGoRefuses) and Kubernetes,
// and by deployctl; it returns where they disagree, and how many of them
// Argo CD refuses.
func disagreements(t *testing.T, all []judgement) (diffs []string, refused int) {
	objs := make([]map[string]any, len(all))
	for i, j := range all {
		objs[i] = j.obj
	}
	goVerdicts := argoCDGoRefuses(t, objs)
	for i, j := range all {
		var goRefusals []string
		if goVerdicts != nil {
			goRefusals = goVerdicts[i]
		}
		if d, argo := disagreement(t, j.what, j.obj, goRefusals); d != "" {
			diffs = append(diffs, d)
		} else if argo {
			refused++
		}
	}
	sort.Strings(diffs)
	return diffs, refused
}

// disagreement compares both verdicts on one Application, given what
// Argo CD's Go validation refuses in it; "" when they agree, and whether
// Argo CD refuses it.
func disagreement(t *testing.T, what string, obj map[string]any, goRefusals []string) (string, bool) {
	argo := append(argoCDRefuses(t, obj), goRefusals...)
	ours := deployctlRefuses(t, obj)
	switch {
	case len(argo) == 0 && ours != nil:
		return fmt.Sprintf("%s: Argo CD accepts, deployctl refuses: %v", what, firstLine(ours.Error())), false
	case len(argo) > 0 && ours == nil:
		return fmt.Sprintf("%s: deployctl accepts, Argo CD refuses: %s", what, strings.Join(argo, "; ")), true
	}
	return "", len(argo) > 0
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
	var all []judgement
	for _, e := range entries {
		in, err := appread.Read([]string{filepath.Join("../testdata", e.Name())})
		if err != nil {
			continue // a fixture of the reader's refusals: no Application to judge
		}
		for _, m := range in.Apps {
			obj := m.View()
			obj["apiVersion"], obj["kind"] = "argoproj.io/v1alpha1", "Application"
			all = append(all, judgement{fmt.Sprintf("%s (%s)", m.App.Name, m.File), obj})
		}
	}
	n := len(all)
	if n < 50 {
		t.Errorf("only %d fixture Applications read", n)
	}
	diffs, refused := disagreements(t, all)
	if len(diffs) > 0 {
		t.Errorf("%d of %d fixture Applications judged otherwise than by Argo CD:\n%s", len(diffs), n, strings.Join(diffs, "\n"))
	}
	t.Logf("%d fixture Applications (%d refused by both), %d disagreements", n, refused, len(diffs))
}

// base is an Application with every field the variants change; valid
// once onlyType keeps one of its source's four rendering options (Argo CD
// takes one per source).
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
// required): judged with "" only when that validation is given
// (argoCDGoRefuses).
var nonEmpty = [][]string{{"spec", "source", "repoURL"}, {"spec", "source", "path"}}

// sourceTypes are a source's rendering options; Argo CD takes one.
var sourceTypes = []string{"helm", "kustomize", "directory", "plugin"}

// variant is base with path set to v (a string, or any value with
// setAny; nil deletes), its source keeping only the rendering option path
// is under (directory for a path under none).
func variant(path []string, v any, str bool) map[string]any {
	var obj map[string]any
	_ = json.Unmarshal([]byte(base), &obj)
	keep := "directory"
	if len(path) > 2 && path[1] == "source" && slices.Contains(sourceTypes, path[2]) {
		keep = path[2]
	}
	src := obj["spec"].(map[string]any)["source"].(map[string]any)
	for _, t := range sourceTypes {
		if t != keep {
			delete(src, t)
		}
	}
	if str {
		set(obj, path, v.(string))
	} else {
		setAny(obj, path, v)
	}
	return obj
}

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
	goGiven := os.Getenv(argoCDValidateEnv) != ""
	var all []judgement
	for _, typ := range sourceTypes {
		all = append(all, judgement{"base with " + typ, variant([]string{"spec", "source", typ}, nil, false)})
		all[len(all)-1].obj["spec"].(map[string]any)["source"].(map[string]any)[typ] = baseSource(typ)
	}
	if d, refused := disagreements(t, all); len(d) > 0 || refused > 0 {
		t.Fatalf("the base Application must be valid with each source type: %v (%d refused)", d, refused)
	}
	all = nil
	var lost []string
	try := func(path []string, v string) {
		obj := variant(path, v, true)
		what := fmt.Sprintf("%s = %q", strings.Join(path, "."), trim(v))
		all = append(all, judgement{what, obj})
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
			if v != "" || goGiven {
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
		all = append(all, judgement{fmt.Sprintf("%s = %v", strings.Join(c.path, "."), c.v), variant(c.path, c.v, false)})
	}
	// Argo CD's create-time Go rules (argocdvalidate): judged only when
	// that validation is given (the CRD alone accepts them all).
	for _, c := range []struct {
		path []string
		v    any // nil: delete the key
	}{
		{[]string{"spec", "source", "repoURL"}, nil},
		{[]string{"spec", "destination", "name"}, "in-cluster"},
		{[]string{"spec", "destination", "server"}, nil},
		{[]string{"spec", "source", "chart"}, "web"},
		{[]string{"spec", "source", "helm"}, map[string]any{}},
		{[]string{"metadata", "annotations", "argocd.argoproj.io/managed-by-url"}, "ftp://x"},
		{[]string{"metadata", "annotations", "argocd.argoproj.io/managed-by-url"}, "https://argocd.example.com"},
	} {
		if goGiven {
			all = append(all, judgement{fmt.Sprintf("%s = %v", strings.Join(c.path, "."), c.v), variant(c.path, c.v, false)})
		}
	}
	// Several sources: names, ref keys and source types (Argo CD's
	// create-time Go rules, judged only when given).
	for _, srcs := range [][]any{
		{map[string]any{"repoURL": "r", "path": "a", "name": "x"}, map[string]any{"repoURL": "r", "path": "b", "name": "x"}},
		{map[string]any{"repoURL": "r", "path": "a", "name": "x"}, map[string]any{"repoURL": "r", "path": "b", "name": "y"}},
		{map[string]any{"repoURL": "r", "path": "a"}, map[string]any{"repoURL": "r", "ref": "v"}, map[string]any{"repoURL": "q", "ref": "v"}},
		{map[string]any{"repoURL": "r", "path": "a"}, map[string]any{"repoURL": "r", "ref": "v.x"}},
		{map[string]any{"repoURL": "r", "path": "a"}, map[string]any{"repoURL": "r"}},
		{map[string]any{"repoURL": "r", "path": "a", "helm": map[string]any{}, "directory": map[string]any{"recurse": true}}},
	} {
		if !goGiven {
			break
		}
		obj := variant([]string{"spec", "source"}, nil, false)
		obj["spec"].(map[string]any)["sources"] = srcs
		raw, _ := json.Marshal(srcs)
		all = append(all, judgement{"spec.sources = " + string(raw), obj})
	}
	n := len(all)
	diffs, refused := disagreements(t, all)
	if len(diffs) > 0 {
		t.Errorf("%d of %d variants judged otherwise than by Argo CD and Kubernetes:\n%s", len(diffs), n, strings.Join(diffs, "\n"))
	}
	if len(lost) > 0 {
		t.Errorf("%d accepted variants not reproduced:\n%s", len(lost), strings.Join(lost, "\n"))
	}
	t.Logf("%d variants (%d refused by both), %d disagreements; Argo CD's Go validation given: %v", n, refused, len(diffs), goGiven)
}

// baseSource is base's rendering option typ.
func baseSource(typ string) any {
	var obj map[string]any
	_ = json.Unmarshal([]byte(base), &obj)
	return obj["spec"].(map[string]any)["source"].(map[string]any)[typ]
}

func trim(v string) string {
	if len(v) > 20 {
		return v[:20] + "…"
	}
	return v
}
