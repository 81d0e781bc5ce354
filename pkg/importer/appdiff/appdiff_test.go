package appdiff

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Empty values mean "not set" to Argo CD, except an empty automated or
// managedNamespaceMetadata, which turn something on.
func TestPrune(t *testing.T) {
	in := map[string]any{
		"a": "", "b": false, "c": map[string]any{}, "d": []any{},
		"syncPolicy": map[string]any{"automated": map[string]any{}, "retry": map[string]any{"limit": ""}},
		"keep":       []any{"", "x"},
	}
	want := map[string]any{"syncPolicy": map[string]any{"automated": map[string]any{}}, "keep": []any{nil, "x"}}
	if got := Prune(in); !reflect.DeepEqual(got, want) {
		t.Errorf("Prune: %v, want %v", got, want)
	}
	if got := Prune(map[string]any{"automated": map[string]any{"enabled": false, "prune": false}}); !reflect.DeepEqual(got, map[string]any{"automated": map[string]any{"enabled": false}}) {
		t.Errorf("automated.enabled false is Argo CD 3's off switch, not empty: %v", got)
	}
	if got := Prune(map[string]any{"a": ""}); got != nil {
		t.Errorf("Prune of nothing set: %v, want nil", got)
	}
}

// A difference is named by its path: keys with "." or "/" quoted, list
// items by index when both lists have the same length, else the whole list.
func TestDiff(t *testing.T) {
	want := map[string]any{"metadata": map[string]any{"labels": map[string]any{"team.io/a": "x"}}, "spec": map[string]any{"s": []any{"a", "b"}, "l": []any{"a"}}}
	got := map[string]any{"metadata": map[string]any{"labels": map[string]any{"team.io/a": "y"}}, "spec": map[string]any{"s": []any{"a", "c"}, "l": []any{"a", "b"}}}
	var out []Difference
	Diff("web", "", want, got, &out)
	wantOut := []Difference{
		{App: "web", Field: `metadata.labels["team.io/a"]`, Original: `"x"`, Generated: `"y"`},
		{App: "web", Field: "spec.l", Original: `["a"]`, Generated: `["a","b"]`},
		{App: "web", Field: "spec.s[1]", Original: `"b"`, Generated: `"c"`},
	}
	if !reflect.DeepEqual(out, wantOut) {
		t.Errorf("Diff:\n%v\nwant\n%v", out, wantOut)
	}
	if s := (Difference{Field: "spec.x", Original: `"a"`}).String(); s != `spec.x: "a" → (absent)` {
		t.Errorf("String: %s", s)
	}
}

// Comparable keeps name, namespace, labels, annotations and spec, without
// the dropped keys (a "/" entry drops a prefix) and without status.
func TestComparable(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"name": "web", "namespace": "argocd", "uid": "1",
			"labels":      map[string]any{"keep": "1", "drop": "2"},
			"annotations": map[string]any{"meta.helm.sh/release-name": "r", "note": "n"}},
		"spec":   map[string]any{"project": "default"},
		"status": map[string]any{"health": "Healthy"},
	}
	want := map[string]any{
		"metadata": map[string]any{"name": "web", "namespace": "argocd", "labels": map[string]any{"keep": "1"}, "annotations": map[string]any{"note": "n"}},
		"spec":     map[string]any{"project": "default"},
	}
	if got := Comparable(obj, []string{"drop"}, []string{"meta.helm.sh/"}); !reflect.DeepEqual(got, want) {
		t.Errorf("Comparable: %v, want %v", got, want)
	}
	if !Dropped("meta.helm.sh/x", []string{"meta.helm.sh/"}) || Dropped("meta.helm.shx", []string{"meta.helm.sh/"}) {
		t.Error("Dropped: a prefix entry must end in /")
	}
}

// Applications Argo CD reads the same compare equal: a source beside
// sources (ignored), revisionHistoryLimit 10 and an empty project (its
// defaults); anything else differs.
func TestComparableAsArgoCDReads(t *testing.T) {
	app := func(spec string) any {
		var obj map[string]any
		if err := json.Unmarshal([]byte(`{"metadata": {"name": "a"}, "spec": `+spec+`}`), &obj); err != nil {
			t.Fatal(err)
		}
		return Comparable(obj, nil, nil)
	}
	same := app(`{"project": "default", "sources": [{"repoURL": "r", "path": "p"}]}`)
	for _, s := range []string{
		`{"sources": [{"repoURL": "r", "path": "p"}], "source": {"repoURL": "r", "path": "ignored"}}`,
		`{"project": "default", "sources": [{"repoURL": "r", "path": "p"}], "revisionHistoryLimit": 10}`,
		`{"project": "", "sources": [{"repoURL": "r", "path": "p"}]}`,
	} {
		if got := app(s); !reflect.DeepEqual(got, same) {
			t.Errorf("%s: %v, want %v", s, got, same)
		}
	}
	for _, s := range []string{
		`{"project": "default", "source": {"repoURL": "r", "path": "p"}}`,
		`{"project": "default", "sources": [{"repoURL": "r", "path": "p"}], "revisionHistoryLimit": 3}`,
		`{"project": "other", "sources": [{"repoURL": "r", "path": "p"}]}`,
	} {
		if got := app(s); reflect.DeepEqual(got, same) {
			t.Errorf("%s compares equal to %v", s, same)
		}
	}
}
