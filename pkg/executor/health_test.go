package executor

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"

	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/livestate"
)

func application(name, health, sync string, extra map[string]any) *unstructured.Unstructured {
	status := map[string]any{"health": map[string]any{"status": health}, "sync": map[string]any{"status": sync}}
	for k, v := range extra {
		status[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": name, "namespace": "argocd"},
		"status":   status,
	}}
}

// validate's aggregation, read from Argo CD's Applications (docs/requirements.md#rfc-55-aggregate-health).
func TestReadApps(t *testing.T) {
	c, err := load(t, ActionValidate, baseEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	apps := []runtime.Object{
		application("cert-manager", "Healthy", "Synced", map[string]any{"history": []any{map[string]any{"id": int64(0)}}}),
		application("ingress-nginx", "Progressing", "Synced", nil),
		application("database", "Degraded", "Synced", map[string]any{
			"resources": []any{
				map[string]any{"kind": "StatefulSet", "namespace": "app", "name": "database", "health": map[string]any{"status": "Degraded", "message": "0/1 ready"}},
				map[string]any{"kind": "Service", "namespace": "app", "name": "database", "health": map[string]any{"status": "Healthy"}},
			},
			"conditions": []any{map[string]any{"type": "ComparisonError", "message": "boom"}},
		}),
		application("web", "Missing", "OutOfSync", nil),
	}
	scheme := runtime.NewScheme()
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{livestate.GVRApplication: "ApplicationList"}, apps...)
	r := &run{cfg: c, cl: &kube.Clients{Dynamic: dyn}}
	ctx := context.Background()
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"cert-manager"}, AggHealthy},
		{[]string{"cert-manager", "ingress-nginx"}, AggProgressing},
		{[]string{"cert-manager", "ingress-nginx", "database"}, AggDegraded},
		{[]string{"cert-manager", "web"}, AggDegraded}, // Missing counts as Degraded
		{[]string{"cert-manager", "web", "ghost"}, AggFailed},
	} {
		states, agg, err := r.readApps(ctx, tc.names)
		if err != nil {
			t.Fatal(err)
		}
		if agg != tc.want {
			t.Errorf("%v: %s, want %s", tc.names, agg, tc.want)
		}
		if len(states) != len(tc.names) {
			t.Errorf("%v: %d states", tc.names, len(states))
		}
	}
	states, _, _ := r.readApps(ctx, []string{"cert-manager", "database", "ghost"})
	if s := states["database"]; len(s.Problems) != 2 || s.Problems[0] != "StatefulSet app/database Degraded: 0/1 ready" || s.Problems[1] != "ComparisonError: boom" {
		t.Errorf("database problems %q", s.Problems)
	}
	if s := states["ghost"]; s.Exists || s.Verdict != AggFailed {
		t.Errorf("ghost %+v", s)
	}
	if states["cert-manager"].HistoryLen != 1 {
		t.Error("history not read")
	}
	if ok, why := upToDate(states); ok || why != "database is Degraded/Synced, ghost does not exist" {
		t.Errorf("upToDate: %v %q", ok, why)
	}
	states, _, _ = r.readApps(ctx, []string{"cert-manager"})
	if ok, _ := upToDate(states); !ok {
		t.Error("a Healthy Synced app is up to date")
	}
}
