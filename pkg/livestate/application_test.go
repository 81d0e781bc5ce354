package livestate

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestReadApp(t *testing.T) {
	if got := ReadApp(nil); !reflect.DeepEqual(got, AppStatus{}) {
		t.Errorf("absent: %+v", got)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"operation": map[string]any{"sync": map[string]any{}},
		"status": map[string]any{
			"sync":           map[string]any{"status": "OutOfSync", "revision": "abc"},
			"health":         map[string]any{"status": "Degraded", "message": "1 of 2"},
			"operationState": map[string]any{"phase": "Succeeded", "message": "done"},
			"history":        []any{map[string]any{}, map[string]any{}},
			"resources": []any{
				map[string]any{"kind": "Deployment", "namespace": "app", "name": "web", "health": map[string]any{"status": "Healthy"}},
				map[string]any{"kind": "StatefulSet", "namespace": "app", "name": "db", "health": map[string]any{"status": "Degraded", "message": "0/1 ready"}},
				// Cluster-scoped, no message: no "<nil>" and no trailing colon.
				map[string]any{"kind": "ClusterRole", "name": "r", "health": map[string]any{"status": "Missing"}},
				map[string]any{"kind": "ConfigMap", "namespace": "app", "name": "c"},
			},
			"conditions": []any{
				map[string]any{"type": "ComparisonError", "message": "boom"},
				map[string]any{"type": "OrphanedResourceWarning", "message": "not an error"},
			},
		},
	}}
	want := AppStatus{Exists: true, Sync: "OutOfSync", Revision: "abc", Health: "Degraded", HealthMessage: "1 of 2",
		OperationPhase: "Succeeded", OperationMessage: "done", OperationRequested: true, HistoryLen: 2,
		Problems: []string{"StatefulSet app/db Degraded: 0/1 ready", "ClusterRole /r Missing", "ComparisonError: boom"}}
	if got := ReadApp(u); !reflect.DeepEqual(got, want) {
		t.Errorf("read\n got %+v\nwant %+v", got, want)
	}
}
