package step

import (
	"strings"
	"testing"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/gitops-engine/pkg/health"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

func teardown(t *testing.T, f *fakeArgo, extra ...string) outcome {
	t.Helper()
	args := append([]string{"teardown", "--app", "web-app", "--timeout", "1s", "--platform", "ref", "--confirm", "ref"}, extra...)
	return runStep(t, f.addr, args...)
}

// A StatefulSet with a claim from its volumeClaimTemplates: the PVC is in
// the tree as the StatefulSet's child, not among the managed resources.
func statefulTree() ([]v1alpha1.ResourceNode, []*v1alpha1.ResourceDiff) {
	sts := v1alpha1.ResourceRef{Group: "apps", Version: "v1", Kind: "StatefulSet", Namespace: "db", Name: "pg", UID: "s1"}
	tree := []v1alpha1.ResourceNode{
		{ResourceRef: sts},
		{ResourceRef: v1alpha1.ResourceRef{Version: "v1", Kind: "Pod", Namespace: "db", Name: "pg-0", UID: "p1"}, ParentRefs: []v1alpha1.ResourceRef{sts}},
		{ResourceRef: v1alpha1.ResourceRef{Kind: "PersistentVolumeClaim", Namespace: "db", Name: "data-pg-0", UID: "c1"}, ParentRefs: []v1alpha1.ResourceRef{sts}},
		{ResourceRef: v1alpha1.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: "db", Name: "cfg", UID: "m1"}},
	}
	managed := []*v1alpha1.ResourceDiff{
		{Group: "apps", Kind: "StatefulSet", Namespace: "db", Name: "pg", LiveState: `{"metadata":{"name":"pg"}}`},
		{Kind: "ConfigMap", Namespace: "db", Name: "cfg", LiveState: `{"metadata":{"name":"cfg","annotations":{"argocd.argoproj.io/sync-options":"ServerSideApply=true"}}}`},
		{Group: "batch", Kind: "Job", Namespace: "db", Name: "hook", Hook: true, LiveState: "null"},
	}
	return tree, managed
}

func TestTeardownRefusedWithoutConfirmation(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy})
	o := runStep(t, f.addr, "teardown", "--app", "web-app", "--timeout", "1s", "--platform", "ref", "--confirm", "yes")
	expect(t, o, exitcode.Invalid, "teardown refused: --confirm must equal --platform")
	if f.totalCalls() != 0 {
		t.Fatalf("a refused teardown must not touch the API: %v", f.calls)
	}
}

func TestTeardownRefusesAnUnknownCRDPolicy(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy})
	o := teardown(t, f, "--crd-policy", "orphan")
	expect(t, o, exitcode.Invalid, `--crd-policy must be "retain" or "delete", not "orphan"`)
	if f.totalCalls() != 0 || o.str("crdPolicy") != "orphan" {
		t.Fatalf("calls %v, result %v", f.calls, o.result)
	}
}

func TestTeardownOfAbsentAppIsNothingToDo(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{})
	o := teardown(t, f)
	expect(t, o, exitcode.OK)
	if o.result["nothingToDo"] != true || !strings.Contains(o.stdout, "nothing to do") || f.count("delete") != 0 {
		t.Fatalf("result %v, calls %v", o.result, f.calls)
	}
}

// Argo CD sends a watch stream's headers with its first event, and a
// deleted app has none: a stream that drops after the app went and is
// opened again never answers. The step asks with a GET when a stream cannot
// open, so it sees the app gone within a request timeout, not at its
// deadline (issue 24: plugin-mode teardowns of 100 apps waited 6 minutes).
func TestTeardownSeesTheAppGoneWhenTheStreamCannotOpen(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: health.HealthStatusHealthy, stream: streamDrop, lazyHeaders: true})
	o := teardown(t, f, "--timeout", "8s")
	expect(t, o, exitcode.OK)
	if f.count("delete") != 1 {
		t.Fatalf("result %v, calls %v", o.result, f.calls)
	}
}

func TestTeardownRetainsStatefulSetClaims(t *testing.T) {
	t.Parallel()
	tree, managed := statefulTree()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, tree: tree, managed: managed})
	o := teardown(t, f)
	expect(t, o, exitcode.OK)
	if got := anyStrings(o.result["retainedPVCs"]); len(got) != 1 || got[0] != "PersistentVolumeClaim db/data-pg-0" {
		t.Errorf("retained %v", got)
	}
	if got := anyStrings(o.result["managed"]); len(got) != 2 {
		t.Errorf("managed %v", got)
	}
	if f.count("delete") != 1 || f.count("deleteResource") != 0 || o.result["orphans"] != nil {
		t.Errorf("calls %v, result %v", f.calls, o.result)
	}
	f.mu.Lock()
	gone := f.app == nil
	f.mu.Unlock()
	if !gone {
		t.Error("exit 0 while the application still exists")
	}
}

func TestTeardownDeletesClaimsBeforeTheApp(t *testing.T) {
	t.Parallel()
	tree, managed := statefulTree()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, tree: tree, managed: managed})
	o := teardown(t, f, "--pv-policy", "delete")
	expect(t, o, exitcode.OK)
	if len(f.deletedResources) != 1 || f.deletedResources[0] != "/PersistentVolumeClaim/db/data-pg-0@v1" {
		t.Errorf("deleted %v", f.deletedResources)
	}
	if got := anyStrings(o.result["deletedPVCs"]); len(got) != 1 || o.result["retainedPVCs"] != nil {
		t.Errorf("result %v", o.result)
	}
}

// crdTree adds to statefulTree a CRD the app manages, and one it manages
// but that no longer exists (nothing to retain or delete).
func crdTree() ([]v1alpha1.ResourceNode, []*v1alpha1.ResourceDiff) {
	tree, managed := statefulTree()
	tree = append(tree, v1alpha1.ResourceNode{ResourceRef: v1alpha1.ResourceRef{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com", UID: "w1"}})
	managed = append(managed,
		&v1alpha1.ResourceDiff{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "widgets.example.com", LiveState: `{"metadata":{}}`},
		&v1alpha1.ResourceDiff{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "gadgets.example.com", LiveState: "null"},
	)
	return tree, managed
}

// Argo CD never deletes CRDs on cascade; under the default crd-policy that
// is what was asked for, not an orphan.
func TestTeardownRetainsCRDs(t *testing.T) {
	t.Parallel()
	tree, managed := crdTree()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, tree: tree, managed: managed})
	o := teardown(t, f)
	expect(t, o, exitcode.OK)
	if got := anyStrings(o.result["retainedCRDs"]); len(got) != 1 || got[0] != "CustomResourceDefinition.apiextensions.k8s.io widgets.example.com" {
		t.Errorf("retained CRDs %v", got)
	}
	if o.str("crdPolicy") != "retain" || o.result["orphans"] != nil || o.result["deletedCRDs"] != nil || len(f.deletedResources) != 0 {
		t.Errorf("result %v, deleted %v", o.result, f.deletedResources)
	}
	if !strings.Contains(o.stdout, "1 CRDs retained") || !strings.Contains(o.stderr, "crd-policy retain") {
		t.Errorf("stdout %q, stderr:\n%s", o.stdout, o.stderr)
	}
}

// Under crd-policy delete the CRD goes through Argo CD's resource API while
// Argo CD still knows it: before the Application's deletion.
func TestTeardownDeletesCRDsBeforeTheApp(t *testing.T) {
	t.Parallel()
	tree, managed := crdTree()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, tree: tree, managed: managed})
	o := teardown(t, f, "--crd-policy", "delete")
	expect(t, o, exitcode.OK)
	f.mu.Lock()
	changes := strings.Join(f.changes, "; ")
	f.mu.Unlock()
	if want := "delete apiextensions.k8s.io/CustomResourceDefinition//widgets.example.com@v1; delete application"; changes != want {
		t.Errorf("changes %q, want %q", changes, want)
	}
	if got := anyStrings(o.result["deletedCRDs"]); len(got) != 1 || o.result["retainedCRDs"] != nil || o.str("crdPolicy") != "delete" {
		t.Errorf("result %v", o.result)
	}
	// pv-policy is independent: the claim is still retained.
	if got := anyStrings(o.result["retainedPVCs"]); len(got) != 1 {
		t.Errorf("retained PVCs %v", got)
	}
}

func TestTeardownReportsOrphans(t *testing.T) {
	t.Parallel()
	tree, managed := crdTree()
	managed = append(managed,
		&v1alpha1.ResourceDiff{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "kept.example.com", LiveState: `{"metadata":{"annotations":{"argocd.argoproj.io/sync-options":"Delete=false"}}}`},
		&v1alpha1.ResourceDiff{Kind: "Secret", Namespace: "db", Name: "creds", LiveState: `{"metadata":{"annotations":{"argocd.argoproj.io/sync-options":"Prune=false, Delete=false"}}}`},
		&v1alpha1.ResourceDiff{Kind: "Namespace", Name: "db", LiveState: `{"metadata":{"annotations":{"helm.sh/resource-policy":"keep"}}}`},
	)
	tree = append(tree, v1alpha1.ResourceNode{ResourceRef: v1alpha1.ResourceRef{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "kept.example.com", UID: "w2"}})
	f := newFakeArgo(t, scenario{exists: true, before: healthy, tree: tree, managed: managed})
	// Even under crd-policy delete, an annotation asking to keep wins.
	o := teardown(t, f, "--crd-policy", "delete")
	expect(t, o, exitcode.Partial, "3 resource(s) were left in the cluster",
		"CustomResourceDefinition.apiextensions.k8s.io kept.example.com (kept: annotated argocd.argoproj.io/sync-options: Delete=false)",
		"Secret db/creds (kept: annotated argocd.argoproj.io/sync-options: Delete=false)",
		"Namespace db (kept: annotated helm.sh/resource-policy: keep)")
	if got := anyStrings(o.result["deletedCRDs"]); len(got) != 1 || got[0] != "CustomResourceDefinition.apiextensions.k8s.io widgets.example.com" {
		t.Errorf("deleted CRDs %v", got)
	}
}

// A resource Argo CD refuses to delete (here: not in its tree) is an orphan.
func TestTeardownReportsAnUndeletedCRD(t *testing.T) {
	t.Parallel()
	tree, managed := statefulTree()
	managed = append(managed, &v1alpha1.ResourceDiff{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "widgets.example.com", LiveState: `{"metadata":{}}`})
	f := newFakeArgo(t, scenario{exists: true, before: healthy, tree: tree, managed: managed})
	o := teardown(t, f, "--crd-policy", "delete")
	expect(t, o, exitcode.Partial, "1 resource(s) were left in the cluster", "CustomResourceDefinition.apiextensions.k8s.io widgets.example.com (not deleted:")
}

// The root Application is deleted without cascade: its children (and, here,
// a CRD Argo CD would keep) stay for their own teardown nodes, and nothing
// is reported as an orphan.
func TestTeardownWithoutCascadeLeavesResourcesOnPurpose(t *testing.T) {
	t.Parallel()
	tree, managed := statefulTree()
	managed = append(managed, &v1alpha1.ResourceDiff{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "widgets.example.com", LiveState: `{"metadata":{}}`})
	f := newFakeArgo(t, scenario{exists: true, before: healthy, tree: tree, managed: managed})
	o := teardown(t, f, "--cascade=false")
	expect(t, o, exitcode.OK)
	if !f.orphaned || f.count("delete") == 0 || len(f.deletedResources) != 0 {
		t.Fatalf("want one delete with cascade=false and no resource deleted; orphaned=%v calls=%v deleted=%v", f.orphaned, f.calls, f.deletedResources)
	}
	if o.result["orphans"] != nil {
		t.Fatalf("orphans reported for a non-cascading delete: %v", o.result["orphans"])
	}
}

func TestTeardownTimeout(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, deleteStuck: true})
	o := teardown(t, f, "--timeout", "500ms")
	expect(t, o, exitcode.Timeout, "application web-app still exists after 500ms", "finalizers: resources-finalizer.argocd.argoproj.io/foreground",
		"resources still present: Deployment.apps ns/web")
}

func TestTeardownByPolling(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, stream: streamUnsupported})
	expect(t, teardown(t, f), exitcode.OK)
	if f.count("list") == 0 {
		t.Error("an absent app answers 403; the list should have told it from a real denial")
	}
}

// A second teardown after a successful one: nothing to do.
func TestTeardownIsIdempotent(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy})
	expect(t, teardown(t, f), exitcode.OK)
	o := teardown(t, f)
	expect(t, o, exitcode.OK)
	if o.result["nothingToDo"] != true || f.count("delete") != 1 {
		t.Fatalf("result %v calls %v", o.result, f.calls)
	}
}
