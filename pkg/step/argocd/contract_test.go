package argocd

// Contract tests: JSON encoded from argo-cd's real v1alpha1 types (what the
// API server's gateway sends, via encoding/json) must decode into this
// package's structs with the same meaning. Only tests import argo-cd; the
// binary does not link it.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/gitops-engine/pkg/health"
	synccommon "github.com/argoproj/gitops-engine/pkg/sync/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/deployctl/deployctl/pkg/step/argocd/appstatus"
)

var (
	allHealth = []health.HealthStatusCode{
		health.HealthStatusHealthy, health.HealthStatusProgressing, health.HealthStatusDegraded,
		health.HealthStatusSuspended, health.HealthStatusMissing, health.HealthStatusUnknown,
	}
	allPhases = []synccommon.OperationPhase{
		synccommon.OperationRunning, synccommon.OperationTerminating, synccommon.OperationFailed,
		synccommon.OperationError, synccommon.OperationSucceeded,
	}
	allSync = []v1alpha1.SyncStatusCode{v1alpha1.SyncStatusCodeSynced, v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.SyncStatusCodeUnknown}
)

func TestConstantsMatchArgoCD(t *testing.T) {
	pairs := [][2]string{
		{string(appstatus.Healthy), string(health.HealthStatusHealthy)},
		{string(appstatus.Progressing), string(health.HealthStatusProgressing)},
		{string(appstatus.Degraded), string(health.HealthStatusDegraded)},
		{string(appstatus.Suspended), string(health.HealthStatusSuspended)},
		{string(appstatus.Missing), string(health.HealthStatusMissing)},
		{string(appstatus.Unknown), string(health.HealthStatusUnknown)},
		{string(PhaseRunning), string(synccommon.OperationRunning)},
		{string(PhaseTerminating), string(synccommon.OperationTerminating)},
		{string(PhaseFailed), string(synccommon.OperationFailed)},
		{string(PhaseError), string(synccommon.OperationError)},
		{string(PhaseSucceeded), string(synccommon.OperationSucceeded)},
		{string(appstatus.Synced), string(v1alpha1.SyncStatusCodeSynced)},
		{string(appstatus.OutOfSync), string(v1alpha1.SyncStatusCodeOutOfSync)},
		{string(appstatus.SyncUnknown), string(v1alpha1.SyncStatusCodeUnknown)},
		{string(ResultSynced), string(synccommon.ResultCodeSynced)},
		{string(ResultSyncFailed), string(synccommon.ResultCodeSyncFailed)},
		{string(ResultPruned), string(synccommon.ResultCodePruned)},
		{string(ResultPruneSkipped), string(synccommon.ResultCodePruneSkipped)},
		{EventAdded, string(watch.Added)},
		{EventModified, string(watch.Modified)},
		{EventDeleted, string(watch.Deleted)},
	}
	for _, p := range pairs {
		if ours, theirs := p[0], p[1]; ours != theirs {
			t.Errorf("constant %q, argo-cd says %q", ours, theirs)
		}
	}
	if got := fmt.Sprint(appstatus.Healths()); got != fmt.Sprint(allHealth) {
		t.Errorf("appstatus.Healths() = %s, gitops-engine has %s", got, fmt.Sprint(allHealth))
	}
}

func at(s string) metav1.Time {
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return metav1.NewTime(tm)
}

func ptr[T any](v T) *T { return &v }

// realApp is an Application as argo-cd builds it, with every field the step
// reads set (and plenty it does not read, which must not disturb decoding).
func realApp(h health.HealthStatusCode, phase synccommon.OperationPhase, sync v1alpha1.SyncStatusCode) v1alpha1.Application {
	started, finished, reconciled := at("2025-03-01T10:00:00Z"), at("2025-03-01T10:00:07Z"), at("2025-03-01T10:00:09Z")
	op := v1alpha1.Operation{
		Sync:        &v1alpha1.SyncOperation{Revision: "abc123", Prune: true, SyncOptions: v1alpha1.SyncOptions{"CreateNamespace=true"}},
		InitiatedBy: v1alpha1.OperationInitiator{Username: "deployctl"},
		Info:        []*v1alpha1.Info{{Name: "deploystep.sync-id", Value: "f00d"}, {Name: "reason", Value: "dag"}},
		Retry:       v1alpha1.RetryStrategy{Limit: 2},
	}
	st := &v1alpha1.OperationState{
		Operation: op, Phase: phase, Message: "message of " + string(phase), StartedAt: started, RetryCount: 1,
		SyncResult: &v1alpha1.SyncOperationResult{
			Revision: "abc123",
			Source:   v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/p.git", Path: "apps/x"},
			Resources: v1alpha1.ResourceResults{
				{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "ns", Name: "web", Status: synccommon.ResultCodeSynced, Message: "deployment.apps/web configured", SyncPhase: synccommon.SyncPhaseSync},
				{Group: "", Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "bad", Status: synccommon.ResultCodeSyncFailed, Message: "admission webhook denied", SyncPhase: synccommon.SyncPhaseSync},
				{Group: "batch", Version: "v1", Kind: "Job", Namespace: "ns", Name: "migrate", HookType: synccommon.HookTypePreSync, HookPhase: synccommon.OperationFailed, Message: "Job has reached the specified backoff limit", SyncPhase: synccommon.SyncPhasePreSync},
				{Group: "batch", Version: "v1", Kind: "Job", Namespace: "ns", Name: "seed", HookType: synccommon.HookTypePostSync, HookPhase: synccommon.OperationError, SyncPhase: synccommon.SyncPhasePostSync},
				{Group: "batch", Version: "v1", Kind: "Job", Namespace: "ns", Name: "ok", HookType: synccommon.HookTypePostSync, HookPhase: synccommon.OperationSucceeded, SyncPhase: synccommon.SyncPhasePostSync},
				{Group: "", Version: "v1", Kind: "Service", Namespace: "ns", Name: "old", Status: synccommon.ResultCodePruned},
			},
		},
	}
	if phase.Completed() {
		st.FinishedAt = &finished
	}
	app := v1alpha1.Application{
		TypeMeta: metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "Application"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "ceph-cluster", Namespace: "argocd", ResourceVersion: "4711", Generation: 3,
			Finalizers:  []string{"resources-finalizer.argocd.argoproj.io/foreground"},
			Annotations: map[string]string{"argocd.argoproj.io/refresh": "normal"},
			Labels:      map[string]string{"deployctl.dev/platform": "ref"},
		},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "platform",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/p.git", Path: "apps/x", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "rook-ceph"},
			SyncPolicy: &v1alpha1.SyncPolicy{
				Automated:   &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true},
				SyncOptions: v1alpha1.SyncOptions{"ServerSideApply=true"},
			},
		},
		Status: v1alpha1.ApplicationStatus{
			Sync:   v1alpha1.SyncStatus{Status: sync, Revision: "abc123", ComparedTo: v1alpha1.ComparedTo{Source: v1alpha1.ApplicationSource{RepoURL: "r"}}},
			Health: v1alpha1.HealthStatus{Status: h, Message: "app is " + string(h), LastTransitionTime: &reconciled},
			Resources: []v1alpha1.ResourceStatus{
				{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "ns", Name: "web", Status: sync, Health: &v1alpha1.HealthStatus{Status: h, Message: "web is " + string(h)}},
				{Group: "", Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "cfg", Status: v1alpha1.SyncStatusCodeSynced},
				{Group: "batch", Version: "v1", Kind: "Job", Namespace: "ns", Name: "seed", Hook: true, RequiresPruning: true},
			},
			Conditions:     []v1alpha1.ApplicationCondition{{Type: v1alpha1.ApplicationConditionComparisonError, Message: "boom", LastTransitionTime: &reconciled}},
			ReconciledAt:   &reconciled,
			OperationState: st,
			History:        v1alpha1.RevisionHistories{{Revision: "abc122", DeployedAt: started, ID: 1}},
			Summary:        v1alpha1.ApplicationSummary{Images: []string{"nginx:1"}},
		},
	}
	if !phase.Completed() {
		app.Operation = &op
	}
	return app
}

func roundTrip[T any](t *testing.T, v any) T {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	return out
}

func TestApplicationDecodesWithSameMeaning(t *testing.T) {
	for _, h := range allHealth {
		for _, phase := range allPhases {
			for _, sync := range allSync {
				t.Run(fmt.Sprintf("%s/%s/%s", h, phase, sync), func(t *testing.T) {
					src := realApp(h, phase, sync)
					got := roundTrip[Application](t, src)
					checkApp(t, &src, &got)
				})
			}
		}
	}
}

func checkApp(t *testing.T, src *v1alpha1.Application, got *Application) {
	t.Helper()
	eq := func(what string, g, w any) {
		t.Helper()
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("%s: got %v, argo-cd has %v", what, g, w)
		}
	}
	eq("name", got.Metadata.Name, src.Name)
	eq("namespace", got.Metadata.Namespace, src.Namespace)
	eq("resourceVersion", got.Metadata.ResourceVersion, src.ResourceVersion)
	eq("finalizers", got.Metadata.Finalizers, src.Finalizers)
	eq("refresh annotation", got.Metadata.Annotations[v1alpha1.AnnotationKeyRefresh], src.Annotations[v1alpha1.AnnotationKeyRefresh])
	eq("project", got.Spec.Project, src.Spec.Project)
	eq("automated prune", got.Spec.SyncPolicy.Automated.Prune, src.Spec.SyncPolicy.Automated.Prune)
	eq("health", got.Status.Health.Status, src.Status.Health.Status)
	eq("health message", got.Status.Health.Message, src.Status.Health.Message)
	eq("health transition", got.Status.Health.LastTransitionTime.Unix(), src.Status.Health.LastTransitionTime.Unix())
	eq("sync", got.Status.Sync.Status, src.Status.Sync.Status)
	eq("sync revision", got.Status.Sync.Revision, src.Status.Sync.Revision)
	eq("reconciledAt", got.Status.ReconciledAt.Unix(), src.Status.ReconciledAt.Unix())
	eq("conditions", len(got.Status.Conditions), len(src.Status.Conditions))
	eq("condition type", got.Status.Conditions[0].Type, src.Status.Conditions[0].Type)

	eq("resources", len(got.Status.Resources), len(src.Status.Resources))
	for i, r := range src.Status.Resources {
		g := got.Status.Resources[i]
		eq("resource ref", g.Ref().String(), resourceString(r.Group, r.Kind, r.Namespace, r.Name))
		eq("resource sync", g.Status, r.Status)
		eq("resource hook", g.Hook, r.Hook)
		if (g.Health == nil) != (r.Health == nil) {
			t.Fatalf("resource %d health presence differs", i)
		}
		if r.Health != nil {
			eq("resource health", g.Health.Status, r.Health.Status)
			eq("resource health message", g.Health.Message, r.Health.Message)
		}
	}

	// Operation: who runs it, whether it is in progress, whether it is ours.
	srcInProgress := src.Operation != nil || (src.Status.OperationState != nil && !src.Status.OperationState.Phase.Completed())
	eq("operation in progress", got.OperationInProgress(), srcInProgress)
	eq("operation set", got.Operation != nil, src.Operation != nil)
	s, g := src.Status.OperationState, got.Status.OperationState
	eq("phase", g.Phase, s.Phase)
	eq("completed", g.Phase.Completed(), s.Phase.Completed())
	eq("successful", g.Phase.Successful(), s.Phase.Successful())
	eq("op message", g.Message, s.Message)
	eq("startedAt", g.StartedAt.Unix(), s.StartedAt.Unix())
	eq("finishedAt set", g.FinishedAt != nil, s.FinishedAt != nil)
	if s.FinishedAt != nil {
		eq("finishedAt", g.FinishedAt.Unix(), s.FinishedAt.Unix())
	}
	eq("retryCount", g.RetryCount, s.RetryCount)
	eq("ours", g.Operation.HasInfo("deploystep.sync-id", "f00d"), true)
	eq("not ours", g.Operation.HasInfo("deploystep.sync-id", "beef"), false)
	eq("initiator", g.Operation.InitiatedBy.Username, s.Operation.InitiatedBy.Username)
	eq("op revision", g.Operation.Sync.Revision, s.Operation.Sync.Revision)
	eq("sync result revision", g.SyncResult.Revision, s.SyncResult.Revision)
	eq("sync results", len(g.SyncResult.Resources), len(s.SyncResult.Resources))
	for i, r := range s.SyncResult.Resources {
		gr := g.SyncResult.Resources[i]
		argoFailed := r.Status == synccommon.ResultCodeSyncFailed || r.HookPhase == synccommon.OperationFailed || r.HookPhase == synccommon.OperationError
		eq("result "+r.Name+" failed", gr.Failed(), argoFailed)
		eq("result ref", gr.Ref().String(), resourceString(r.Group, r.Kind, r.Namespace, r.Name))
		eq("result status", gr.Status, r.Status)
		eq("result message", gr.Message, r.Message)
		eq("result hook type", gr.HookType, r.HookType)
		eq("result hook phase", gr.HookPhase, r.HookPhase)
		eq("result sync phase", gr.SyncPhase, r.SyncPhase)
	}
}

func resourceString(group, kind, ns, name string) string {
	return ResourceRef{Group: group, Kind: kind, Namespace: ns, Name: name}.String()
}

// A fresh Application from argo-cd has zero times, which metav1.Time
// encodes as null: they must decode as absent, not fail.
func TestZeroTimesDecode(t *testing.T) {
	src := v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Status: v1alpha1.ApplicationStatus{
		OperationState: &v1alpha1.OperationState{Phase: synccommon.OperationRunning},
	}}
	got := roundTrip[Application](t, src)
	if !got.Status.OperationState.StartedAt.IsZero() || got.Status.OperationState.FinishedAt != nil || got.Status.ReconciledAt != nil {
		t.Fatalf("zero times decoded as %+v", got.Status)
	}
	if got.Status.Health.Status != "" || !got.OperationInProgress() {
		t.Fatalf("unexpected meaning: %+v", got)
	}
}

func TestResourceTreeDecodes(t *testing.T) {
	created := at("2025-03-01T10:00:00Z")
	src := v1alpha1.ApplicationTree{
		Nodes: []v1alpha1.ResourceNode{
			{ResourceRef: v1alpha1.ResourceRef{Group: "apps", Version: "v1", Kind: "StatefulSet", Namespace: "db", Name: "pg", UID: "u1"},
				Health: &v1alpha1.HealthStatus{Status: health.HealthStatusProgressing, Message: "waiting"}, CreatedAt: &created,
				Info: []v1alpha1.InfoItem{{Name: "Status Reason", Value: "x"}}, Images: []string{"pg:16"}, ResourceVersion: "9"},
			{ResourceRef: v1alpha1.ResourceRef{Version: "v1", Kind: "PersistentVolumeClaim", Namespace: "db", Name: "data-pg-0", UID: "u2"},
				ParentRefs: []v1alpha1.ResourceRef{{Group: "apps", Kind: "StatefulSet", Namespace: "db", Name: "pg", UID: "u1"}},
				Health:     &v1alpha1.HealthStatus{Status: health.HealthStatusHealthy}},
			{ResourceRef: v1alpha1.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: "db", Name: "cfg", UID: "u3"}},
			{ResourceRef: v1alpha1.ResourceRef{Group: "ceph.rook.io", Version: "v1", Kind: "CephCluster", Namespace: "rook-ceph", Name: "rook-ceph"},
				Health: &v1alpha1.HealthStatus{Status: health.HealthStatusDegraded, Message: "HEALTH_ERR"}},
		},
		OrphanedNodes: []v1alpha1.ResourceNode{{ResourceRef: v1alpha1.ResourceRef{Version: "v1", Kind: "Pod", Namespace: "db", Name: "stray"}}},
		Hosts:         []v1alpha1.HostInfo{{Name: "node-1"}},
	}
	got := roundTrip[ApplicationTree](t, src)
	if len(got.Nodes) != len(src.Nodes) || len(got.OrphanedNodes) != 1 {
		t.Fatalf("nodes: %d/%d", len(got.Nodes), len(got.OrphanedNodes))
	}
	for i, n := range src.Nodes {
		g := got.Nodes[i]
		if g.ResourceRef != (ResourceRef{Group: n.Group, Version: n.Version, Kind: n.Kind, Namespace: n.Namespace, Name: n.Name, UID: n.UID}) {
			t.Errorf("node %d ref %+v, argo-cd %+v", i, g.ResourceRef, n.ResourceRef)
		}
		if (g.Health == nil) != (n.Health == nil) || n.Health != nil && (string(g.Health.Status) != string(n.Health.Status) || g.Health.Message != n.Health.Message) {
			t.Errorf("node %d health %+v, argo-cd %+v", i, g.Health, n.Health)
		}
		if len(g.ParentRefs) != len(n.ParentRefs) {
			t.Errorf("node %d parents %v", i, g.ParentRefs)
		}
	}
	if got.Nodes[0].CreatedAt == nil || !got.Nodes[0].CreatedAt.Equal(created.Time) {
		t.Errorf("createdAt %v", got.Nodes[0].CreatedAt)
	}
	if !got.Nodes[1].ParentRefs[0].Same(ResourceRef{Group: "apps", Kind: "StatefulSet", Namespace: "db", Name: "pg"}) {
		t.Errorf("parent %+v", got.Nodes[1].ParentRefs[0])
	}
}

// Argo CD's ManagedResourcesResponse, read item by item by the client:
// the live view (teardown) and the target view (import --live).
func TestManagedResourcesDecode(t *testing.T) {
	src := map[string]any{"items": []*v1alpha1.ResourceDiff{
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "widgets.example.com", LiveState: `{"metadata":{"name":"widgets.example.com"}}`, TargetState: "{}", Modified: true},
		{Kind: "ConfigMap", Namespace: "ns", Name: "keep", LiveState: `{"metadata":{"annotations":{"argocd.argoproj.io/sync-options":"Prune=false,Delete=false"}}}`},
		{Group: "batch", Kind: "Job", Namespace: "ns", Name: "hook", Hook: true, LiveState: "null"},
	}}
	answer, err := json.Marshal(src)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(answer) }))
	defer srv.Close()
	c := testClient(t, srv.URL, "")
	got, err := c.ManagedResources(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Ref().String() != "CustomResourceDefinition.apiextensions.k8s.io widgets.example.com" ||
		got[1].LiveState == "" || !got[2].Hook || got[2].LiveState != "null" {
		t.Fatalf("decoded %+v", got)
	}
	var targets []ManagedTarget
	if err := c.ManagedTargets(context.Background(), "", "x", func(m ManagedTarget) error { targets = append(targets, m); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(targets) != 3 || targets[0].TargetState != "{}" || targets[1].TargetState != "" || targets[2].Name != "hook" {
		t.Fatalf("targets %+v", targets)
	}
}

// The watch stream as grpc-gateway writes it: {"result": event} lines.
func TestWatchStreamDecodesRealEvents(t *testing.T) {
	var body bytes.Buffer
	for i, typ := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted} {
		ev := v1alpha1.ApplicationWatchEvent{Type: typ, Application: realApp(allHealth[i], allPhases[i], v1alpha1.SyncStatusCodeSynced)}
		b, _ := json.Marshal(map[string]any{"result": ev})
		body.Write(append(b, '\n'))
	}
	body.WriteString(`{"error":{"grpc_code":14,"http_code":503,"message":"transport is closing","http_status":"Service Unavailable"}}` + "\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/stream/applications" || r.URL.Query().Get("name") != "ceph-cluster" {
			http.NotFound(w, r)
			return
		}
		w.Write(body.Bytes())
	}))
	defer srv.Close()
	c := testClient(t, srv.URL, "")
	st, err := c.Watch(t.Context(), "ceph-cluster")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, typ := range []string{EventAdded, EventModified, EventDeleted} {
		ev, err := st.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != typ || ev.Application.Metadata.Name != "ceph-cluster" || string(ev.Application.Status.Health.Status) != string(allHealth[i]) ||
			string(ev.Application.Status.OperationState.Phase) != string(allPhases[i]) {
			t.Errorf("event %d: %s %s %s", i, ev.Type, ev.Application.Status.Health.Status, ev.Application.Status.OperationState.Phase)
		}
	}
	_, err = st.Next()
	if !IsTransient(err) || err.Error() != "watch application ceph-cluster: transport is closing (HTTP 503)" {
		t.Fatalf("stream error: %v (transient %v)", err, IsTransient(err))
	}
}

// applicationSyncRequest mirrors pkg/apiclient/application.ApplicationSyncRequest
// (application.pb.go; that package cannot be linked here without more go.sum
// entries): every field our request sends must be one of these.
type applicationSyncRequest struct {
	Name          *string                           `json:"name,omitempty"`
	Revision      *string                           `json:"revision,omitempty"`
	DryRun        *bool                             `json:"dryRun,omitempty"`
	Prune         *bool                             `json:"prune,omitempty"`
	Strategy      *v1alpha1.SyncStrategy            `json:"strategy,omitempty"`
	Resources     []*v1alpha1.SyncOperationResource `json:"resources,omitempty"`
	Manifests     []string                          `json:"manifests,omitempty"`
	Infos         []*v1alpha1.Info                  `json:"infos,omitempty"`
	RetryStrategy *v1alpha1.RetryStrategy           `json:"retryStrategy,omitempty"`
	SyncOptions   *struct {
		Items []string `json:"items,omitempty"`
	} `json:"syncOptions,omitempty"`
	AppNamespace    *string  `json:"appNamespace,omitempty"`
	Project         *string  `json:"project,omitempty"`
	SourcePositions []int64  `json:"sourcePositions,omitempty"`
	Revisions       []string `json:"revisions,omitempty"`
}

func TestSyncRequestIsAnApplicationSyncRequest(t *testing.T) {
	var got applicationSyncRequest
	var seen []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		seen = []byte(r.URL.Path)
		json.NewEncoder(w).Encode(realApp(health.HealthStatusHealthy, synccommon.OperationRunning, v1alpha1.SyncStatusCodeOutOfSync))
	}))
	defer srv.Close()
	c := testClient(t, srv.URL, "apps")
	app, err := c.Sync(t.Context(), "ceph-cluster", true, []Info{{Name: "deploystep.sync-id", Value: "f00d"}})
	if err != nil {
		t.Fatal(err)
	}
	if string(seen) != "/api/v1/applications/ceph-cluster/sync" || *got.Name != "ceph-cluster" || *got.AppNamespace != "apps" ||
		!*got.Prune || len(got.Infos) != 1 || got.Infos[0].Name != "deploystep.sync-id" || got.Infos[0].Value != "f00d" {
		t.Fatalf("argo-cd would read %s %+v", seen, got)
	}
	if !app.Operation.HasInfo("deploystep.sync-id", "f00d") {
		t.Fatal("the answer's operation should carry our id")
	}
}

func testClient(t *testing.T, serverURL, appNS string) *Client {
	t.Helper()
	tok := filepath.Join(t.TempDir(), "token")
	if err := writeFile(tok, "  s3cr3t\n"); err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{Server: serverURL[len("http://"):], Plaintext: true, TokenFile: tok, AppNamespace: appNS, RequestTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
