package apply

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A dry-run outcome compares the would-be object with the live one,
// ignoring the field manager's bookkeeping.
func TestSameObject(t *testing.T) {
	a := &unstructured.Unstructured{Object: map[string]any{
		"kind": "ConfigMap", "metadata": map[string]any{"name": "x", "resourceVersion": "7",
			"managedFields": []any{map[string]any{"manager": "deployctl", "time": "2026-01-01T00:00:00Z"}}},
		"data": map[string]any{"k": "v"},
	}}
	b := a.DeepCopy()
	unstructured.SetNestedField(b.Object, "8", "metadata", "resourceVersion")
	unstructured.SetNestedSlice(b.Object, []any{map[string]any{"manager": "deployctl", "time": "2026-02-01T00:00:00Z"}}, "metadata", "managedFields")
	if !SameObject(a, b) {
		t.Error("bookkeeping differences must not count")
	}
	unstructured.SetNestedField(b.Object, "w", "data", "k")
	if SameObject(a, b) {
		t.Error("a data change must count")
	}
}
