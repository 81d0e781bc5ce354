package executor

import (
	"context"
	"reflect"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/livestate"
)

// An app with its own applicationNamespace is read there, not in Argo CD's
// namespace: validate judges the right Application, and teardown's list of
// the platform's Applications covers that namespace too.
func TestReadAppsInAppNamespace(t *testing.T) {
	c, err := load(t, ActionValidate, baseEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	node := c.DAG.Node("database")
	if node == nil || node.App == nil {
		t.Fatal("the fixture has no app database")
	}
	node.App.ApplicationNamespace = "team-a"
	inTeamA := application("database", "Healthy", "Synced", nil)
	inTeamA.SetNamespace("team-a")
	inTeamA.SetLabels(map[string]string{compile.LabelPlatform: c.Platform()})
	stale := application("database", "Degraded", "Synced", nil) // same name, Argo CD's namespace: not the app's
	cm := application("cert-manager", "Healthy", "Synced", nil)
	cm.SetLabels(map[string]string{compile.LabelPlatform: c.Platform()})
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{livestate.GVRApplication: "ApplicationList"}, inTeamA, stale, cm)
	r := &run{cfg: c, cl: &kube.Clients{Dynamic: dyn}}
	states, agg, err := r.readApps(context.Background(), []string{"cert-manager", "database"})
	if err != nil {
		t.Fatal(err)
	}
	if agg != AggHealthy || !states["database"].Exists {
		t.Errorf("aggregate %s, database %+v: read from Argo CD's namespace?", agg, states["database"])
	}
	names, err := r.readPlatformApps(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	if want := []string{"cert-manager", "database"}; !reflect.DeepEqual(names, want) {
		t.Errorf("platform Applications %v, want %v", names, want)
	}
}
