package step

// A fake Argo CD API server that models one application's lifecycle the way
// argo-cd's API server and controller behave (see the notes on each piece),
// serves argo-cd's real v1alpha1 types, and injects the faults a real server
// will not produce on demand.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/gitops-engine/pkg/health"
	synccommon "github.com/argoproj/gitops-engine/pkg/sync/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

const fakeToken = "test-token"

type streamMode int

const (
	streamNormal      streamMode = iota
	streamUnsupported            // 404, as a proxy without the route answers
	streamStall                  // sends the current state, then nothing ever again
	streamSilent                 // headers, then nothing at all
	streamDrop                   // after each event, the connection is cut (RST)
)

// scenario configures the fake. Zero values give a quick, healthy lifecycle.
type scenario struct {
	exists       bool                      // the app exists at start
	before       health.HealthStatusCode   // health before our sync ("" for a new app: Missing after its first reconcile)
	duringSync   []health.HealthStatusCode // health of reconciliations while our sync runs (stale by definition)
	after        []health.HealthStatusCode // health of successive reconciliations that start after our sync finished; the last repeats
	staleAfterOp bool                      // the controller's own post-operation reconcile began during the sync: old health, new reconciledAt
	syncDuration time.Duration
	outcome      synccommon.OperationPhase // of our sync; Succeeded by default
	outcomeMsg   string
	results      []*v1alpha1.ResourceResult
	resync       time.Duration // periodic reconciliation
	earlierOp    bool          // an operation we did not start is running at start
	earlierStuck bool          // ... and never ends unless terminated
	ourOpStuck   bool          // our operation never ends unless terminated
	conflicts    int           // first N syncs: another operation is already in progress
	fail503      int           // next N requests: 503 from a proxy
	reject401    int           // first N requests: token not yet valid
	stream       streamMode
	tree         []v1alpha1.ResourceNode
	managed      []*v1alpha1.ResourceDiff
	deleteStuck  bool // the Application's finalizer never completes
	// A server that answers GET ?refresh at once, without a reconciliation,
	// and whose controller neither refreshes after an operation nor has
	// reconciled lately: the answer predates the sync.
	refreshIgnored bool
	// The controller misses the update that sets our operation and starts
	// it only after a later change of the app (a refresh request).
	missesOp bool
}

type fakeArgo struct {
	t  testing.TB
	sc scenario

	mu      sync.Mutex
	app     *v1alpha1.Application // nil: absent
	rv      int
	changed chan struct{} // closed on every change

	// controller model
	created             time.Time
	firstReconcile      bool
	ourOpStart          time.Time
	ourOpFinished       time.Time // zero until our sync finished
	postOpPending       bool
	lastReconcile       time.Time
	freshIdx, duringIdx int
	freshHealth         health.HealthStatusCode // health of the last reconcile that started after our sync finished; "" if the current health is not such
	refreshGen          int                     // reconciliations that served a refresh request
	refreshWanted       bool
	opNoticed           bool // missesOp: a refresh came after our operation was set
	deleting            time.Time

	// record
	calls            map[string]int
	servedFresh      map[health.HealthStatusCode]bool // fresh health the step was ever shown
	syncRequests     []string
	deletedResources []string
	changes          []string // deletions requested, in order
	orphaned         bool     // the app was deleted with cascade=false
	updates          int      // upserts that changed the spec
	down             bool

	// network
	addr  string
	l     net.Listener
	srv   *http.Server
	conns map[net.Conn]struct{}
	stop  chan struct{}
	wg    sync.WaitGroup

	onOurOpStart func(f *fakeArgo)
}

func newFakeArgo(t testing.TB, sc scenario) *fakeArgo {
	if sc.syncDuration == 0 {
		sc.syncDuration = 80 * time.Millisecond
	}
	if sc.outcome == "" {
		sc.outcome = synccommon.OperationSucceeded
	}
	if sc.resync == 0 {
		sc.resync = 100 * time.Millisecond
	}
	if len(sc.after) == 0 {
		sc.after = []health.HealthStatusCode{health.HealthStatusProgressing, health.HealthStatusHealthy}
	}
	if sc.tree == nil {
		sc.tree = []v1alpha1.ResourceNode{
			{ResourceRef: v1alpha1.ResourceRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "ns", Name: "web", UID: "d1"}},
			{ResourceRef: v1alpha1.ResourceRef{Version: "v1", Kind: "Pod", Namespace: "ns", Name: "web-1", UID: "p1"},
				ParentRefs: []v1alpha1.ResourceRef{{Group: "apps", Kind: "Deployment", Namespace: "ns", Name: "web", UID: "d1"}}},
			{ResourceRef: v1alpha1.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "cfg", UID: "c1"}},
		}
	}
	f := &fakeArgo{t: t, sc: sc, changed: make(chan struct{}), calls: map[string]int{},
		servedFresh: map[health.HealthStatusCode]bool{}, conns: map[net.Conn]struct{}{}, stop: make(chan struct{})}
	if sc.exists {
		f.app = newApp("web-app")
		f.firstReconcile = true
		f.setHealth(sc.before)
		if sc.earlierOp {
			op := v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "old"}, InitiatedBy: v1alpha1.OperationInitiator{Automated: true}}
			f.app.Operation = &op
			f.app.Status.OperationState = &v1alpha1.OperationState{Operation: op, Phase: synccommon.OperationRunning, StartedAt: metav1.Now()}
		}
		f.rv = 100
		f.app.ResourceVersion = "100"
		if sc.refreshIgnored {
			hourAgo := metav1.NewTime(time.Now().Add(-time.Hour))
			f.app.Status.ReconciledAt = &hourAgo
			f.lastReconcile = time.Now()
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = l.Addr().String()
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serve), ConnState: f.track}
	f.l = l
	f.wg.Add(2)
	go func() { defer f.wg.Done(); _ = f.srv.Serve(l) }()
	go func() { defer f.wg.Done(); f.controller() }()
	t.Cleanup(f.close)
	return f
}

func newApp(name string) *v1alpha1.Application {
	return &v1alpha1.Application{
		TypeMeta:   metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "Application"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argocd"},
		Spec: v1alpha1.ApplicationSpec{Project: "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/p.git", Path: "apps/web", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "ns"}},
	}
}

func (f *fakeArgo) close() {
	close(f.stop)
	f.srv.Close()
	f.wg.Wait()
}

func (f *fakeArgo) track(c net.Conn, s http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch s {
	case http.StateNew:
		f.conns[c] = struct{}{}
	case http.StateClosed, http.StateHijacked:
		delete(f.conns, c)
	}
}

// goDown refuses connections (the listener is closed, open connections are
// cut) for d; forever if d is 0.
func (f *fakeArgo) goDown(d time.Duration) {
	f.mu.Lock()
	f.down = true
	l := f.l
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	l.Close()
	if d == 0 {
		return
	}
	time.AfterFunc(d, func() {
		l, err := net.Listen("tcp", f.addr)
		if err != nil {
			f.t.Errorf("relisten: %v", err)
			return
		}
		f.mu.Lock()
		f.l, f.down = l, false
		f.mu.Unlock()
		go func() { _ = f.srv.Serve(l) }()
	})
}

// --- controller model ---

// bump records a change: new resourceVersion, wake the streams.
func (f *fakeArgo) bump() {
	f.rv++
	if f.app != nil {
		f.app.ResourceVersion = fmt.Sprint(f.rv)
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeArgo) setHealth(h health.HealthStatusCode) {
	if h == "" {
		h = health.HealthStatusMissing
	}
	msg := ""
	if h != health.HealthStatusHealthy {
		msg = "web is " + string(h)
	}
	now := metav1.Now()
	if f.app.Status.Health.Status != h {
		f.app.Status.Health.LastTransitionTime = &now
	}
	f.app.Status.Health.Status, f.app.Status.Health.Message = h, msg
	f.app.Status.ReconciledAt = &now
	f.app.Status.Sync.Status = v1alpha1.SyncStatusCodeSynced
	f.app.Status.Sync.Revision = "abc123"
	f.app.Status.Resources = []v1alpha1.ResourceStatus{
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "ns", Name: "web", Status: v1alpha1.SyncStatusCodeSynced,
			Health: &v1alpha1.HealthStatus{Status: h, Message: msg}},
		{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "cfg", Status: v1alpha1.SyncStatusCodeSynced},
	}
	for i := range f.sc.tree {
		n := &f.sc.tree[i]
		if n.Kind == "Deployment" || n.Kind == "Pod" {
			n.Health = &v1alpha1.HealthStatus{Status: h, Message: msg}
		}
	}
}

// reconcile persists health. A reconciliation that started after our sync
// finished shows the next scripted health; any other shows stale health.
func (f *fakeArgo) reconcile(fresh bool) {
	f.lastReconcile = time.Now()
	switch {
	case fresh:
		h := f.sc.after[min(f.freshIdx, len(f.sc.after)-1)]
		f.freshIdx++
		f.setHealth(h)
		f.freshHealth = h
	case !f.ourOpStart.IsZero() && f.ourOpFinished.IsZero() && len(f.sc.duringSync) > 0:
		f.setHealth(f.sc.duringSync[f.duringIdx%len(f.sc.duringSync)])
		f.duringIdx++
		f.freshHealth = ""
	default:
		f.setHealth(f.app.Status.Health.Status) // same health, new reconciledAt
		f.freshHealth = ""
	}
	if f.refreshWanted {
		// Argo CD drops the refresh annotation in the reconciliation that
		// read it; GET ?refresh waits for exactly that.
		f.refreshWanted = false
		delete(f.app.Annotations, v1alpha1.AnnotationKeyRefresh)
		f.refreshGen++
	}
	f.bump()
}

func (f *fakeArgo) controller() {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-tick.C:
		}
		f.mu.Lock()
		f.step()
		f.mu.Unlock()
	}
}

func (f *fakeArgo) step() {
	a := f.app
	if a == nil {
		return
	}
	now := time.Now()
	if !f.firstReconcile && now.Sub(f.created) > 20*time.Millisecond {
		f.firstReconcile = true
		f.setHealth(health.HealthStatusMissing) // resources not applied yet
		f.bump()
	}
	if !f.deleting.IsZero() {
		if !f.sc.deleteStuck && now.Sub(f.deleting) > 60*time.Millisecond {
			f.app = nil
			f.bump()
		}
		return
	}
	st := a.Status.OperationState
	switch {
	case a.Operation != nil && (st == nil || st.Phase.Completed()) && (!f.sc.missesOp || !ours(a.Operation) || f.opNoticed):
		op := *a.Operation
		a.Status.OperationState = &v1alpha1.OperationState{Operation: op, Phase: synccommon.OperationRunning, StartedAt: metav1.Now()}
		if ours(&op) {
			f.ourOpStart, f.ourOpFinished = now, time.Time{}
			if f.onOurOpStart != nil {
				go f.onOurOpStart(f)
			}
		}
		f.bump()
	case st != nil && st.Phase == synccommon.OperationTerminating:
		f.finishOp(synccommon.OperationFailed, "Operation terminated", nil)
	case st != nil && st.Phase == synccommon.OperationRunning:
		if ours(&st.Operation) {
			if !f.sc.ourOpStuck && now.Sub(f.ourOpStart) >= f.sc.syncDuration {
				f.finishOp(f.sc.outcome, f.sc.outcomeMsg, f.sc.results)
				f.ourOpFinished = time.Now()
				f.postOpPending = !f.sc.refreshIgnored
			}
		} else if !f.sc.earlierStuck && now.Sub(st.StartedAt.Time) >= 150*time.Millisecond {
			f.finishOp(synccommon.OperationSucceeded, "successfully synced (all tasks run)", nil)
		}
	}
	switch {
	case f.postOpPending:
		// The controller refreshes the app right after an operation.
		f.postOpPending = false
		f.reconcile(!f.sc.staleAfterOp)
	case f.refreshWanted:
		f.reconcile(!f.ourOpFinished.IsZero())
	case now.Sub(f.lastReconcile) >= f.sc.resync:
		f.reconcile(!f.ourOpFinished.IsZero())
	}
}

func ours(op *v1alpha1.Operation) bool {
	for _, i := range op.Info {
		if i.Name == syncIDInfo {
			return true
		}
	}
	return false
}

func (f *fakeArgo) finishOp(phase synccommon.OperationPhase, msg string, results []*v1alpha1.ResourceResult) {
	st := f.app.Status.OperationState
	now := metav1.Now()
	st.Phase, st.Message, st.FinishedAt = phase, msg, &now
	st.SyncResult = &v1alpha1.SyncOperationResult{Revision: "abc123", Resources: results}
	f.app.Operation = nil
	f.bump()
}

// --- HTTP ---

func (f *fakeArgo) count(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[kind]
}

func (f *fakeArgo) totalCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

func gwError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": msg, "code": code, "message": msg})
}

// sendApp writes the app (lock held) and records what fresh health it shows.
func (f *fakeArgo) sendApp(w http.ResponseWriter) {
	if f.freshHealth != "" {
		f.servedFresh[f.freshHealth] = true
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(f.app)
}

func (f *fakeArgo) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	kind := classify(r)
	f.mu.Lock()
	f.calls[kind]++
	if f.sc.reject401 > 0 {
		f.sc.reject401--
		f.mu.Unlock()
		gwError(w, 401, 16, "invalid session: token is not valid yet")
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+fakeToken {
		f.mu.Unlock()
		gwError(w, 401, 16, "no session information")
		return
	}
	// argocd-server's content-type guard (server.enforceContentTypes).
	if r.Method != http.MethodGet && r.Header.Get("Content-Type") != "application/json" {
		f.mu.Unlock()
		http.Error(w, "Invalid content type", http.StatusUnsupportedMediaType)
		return
	}
	if f.sc.fail503 > 0 {
		f.sc.fail503--
		f.mu.Unlock()
		http.Error(w, "upstream connect error or disconnect/reset before headers", 503)
		return
	}
	if kind == "watch" {
		f.mu.Unlock()
		f.watch(w, r)
		return
	}
	defer f.mu.Unlock()
	name := strings.TrimPrefix(path, "/api/v1/applications/")
	name, sub, _ := strings.Cut(name, "/")
	absent := f.app == nil || f.app.Name != name
	switch kind {
	case "list":
		items := []v1alpha1.Application{}
		if f.app != nil && f.app.Name == r.URL.Query().Get("name") {
			items = append(items, *f.app)
		}
		json.NewEncoder(w).Encode(map[string]any{"items": items})
		return
	case "create":
		var a v1alpha1.Application
		if err := json.NewDecoder(r.Body).Decode(&a); err != nil || a.Name == "" {
			gwError(w, 400, 3, fmt.Sprintf("bad application: %v", err))
			return
		}
		switch {
		case f.app == nil:
			f.app, f.created = &a, time.Now()
			f.bump()
		case r.URL.Query().Get("upsert") == "true" && !reflect.DeepEqual(f.app.Spec, a.Spec):
			// Argo CD's upsert: replace the spec only when it differs.
			f.app.Spec = a.Spec
			f.updates++
			f.bump()
		}
		f.sendApp(w)
		return
	}
	if absent {
		// Argo CD hides absence behind 403 unless a project is given.
		gwError(w, 403, 7, "permission denied")
		return
	}
	switch kind {
	case "get":
		f.sendApp(w)
	case "refresh", "hard-refresh":
		if f.sc.refreshIgnored {
			f.sendApp(w)
			return
		}
		if f.app.Annotations == nil {
			f.app.Annotations = map[string]string{}
		}
		f.app.Annotations[v1alpha1.AnnotationKeyRefresh] = r.URL.Query().Get("refresh")
		f.opNoticed = f.app.Operation != nil
		f.refreshWanted = true
		gen := f.refreshGen
		f.bump()
		for f.refreshGen == gen {
			ch := f.changed
			f.mu.Unlock()
			select {
			case <-ch:
			case <-r.Context().Done():
				f.mu.Lock()
				return
			}
			f.mu.Lock()
			if f.app == nil {
				gwError(w, 404, 5, "not found")
				return
			}
		}
		f.sendApp(w)
	case "sync":
		var req struct {
			Name  string           `json:"name"`
			Prune bool             `json:"prune"`
			Infos []*v1alpha1.Info `json:"infos"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		f.syncRequests = append(f.syncRequests, req.Name)
		if f.sc.conflicts > 0 {
			f.sc.conflicts--
			gwError(w, 400, 9, "error setting app operation: rpc error: code = FailedPrecondition desc = another operation is already in progress")
			return
		}
		st := f.app.Status.OperationState
		if f.app.Operation != nil || st != nil && !st.Phase.Completed() {
			gwError(w, 400, 9, "another operation is already in progress")
			return
		}
		f.app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "main", Prune: req.Prune},
			InitiatedBy: v1alpha1.OperationInitiator{Username: "deploystep"}, Info: req.Infos}
		f.bump()
		f.sendApp(w)
	case "terminate":
		st := f.app.Status.OperationState
		if st == nil || st.Phase != synccommon.OperationRunning {
			gwError(w, 400, 9, "Unable to terminate operation. No operation is in progress")
			return
		}
		st.Phase = synccommon.OperationTerminating
		f.bump()
		w.Write([]byte("{}"))
	case "tree":
		json.NewEncoder(w).Encode(v1alpha1.ApplicationTree{Nodes: f.sc.tree})
	case "managed":
		json.NewEncoder(w).Encode(map[string]any{"items": f.sc.managed})
	case "delete":
		q := r.URL.Query()
		switch {
		case q.Get("cascade") == "false" && q.Get("propagationPolicy") == "":
			f.orphaned = true
		case q.Get("cascade") != "true" || q.Get("propagationPolicy") != "foreground":
			gwError(w, 400, 3, "test: want cascading foreground deletion, or cascade=false")
			return
		}
		f.changes = append(f.changes, "delete application")
		if f.deleting.IsZero() {
			now := metav1.Now()
			f.deleting = time.Now()
			f.app.DeletionTimestamp = &now
			f.app.Finalizers = []string{"resources-finalizer.argocd.argoproj.io/foreground"}
			f.bump()
		}
		w.Write([]byte("{}"))
	case "deleteResource":
		// Argo CD deletes only what its tree holds (getAppLiveResource), at
		// the node's version; the request's version is required all the same.
		q := r.URL.Query()
		ref := v1alpha1.ResourceRef{Group: q.Get("group"), Kind: q.Get("kind"), Namespace: q.Get("namespace"), Name: q.Get("resourceName")}
		known := false
		for _, n := range f.sc.tree {
			if n.Group == ref.Group && n.Kind == ref.Kind && n.Namespace == ref.Namespace && n.Name == ref.Name && n.UID != "" {
				known = true
			}
		}
		if !known || q.Get("version") == "" {
			gwError(w, 400, 3, fmt.Sprintf("%s %s %s not found as part of application %s", ref.Kind, ref.Group, ref.Name, name))
			return
		}
		res := fmt.Sprintf("%s/%s/%s/%s@%s", ref.Group, ref.Kind, ref.Namespace, ref.Name, q.Get("version"))
		f.deletedResources = append(f.deletedResources, res)
		f.changes = append(f.changes, "delete "+res)
		w.Write([]byte("{}"))
	default:
		gwError(w, 404, 5, "no route "+sub)
	}
}

func classify(r *http.Request) string {
	p, q := r.URL.Path, r.URL.Query()
	switch {
	case p == "/api/v1/stream/applications":
		return "watch"
	case p == "/api/v1/applications" && r.Method == http.MethodGet:
		return "list"
	case p == "/api/v1/applications" && r.Method == http.MethodPost:
		return "create"
	case strings.HasSuffix(p, "/sync"):
		return "sync"
	case strings.HasSuffix(p, "/operation"):
		return "terminate"
	case strings.HasSuffix(p, "/resource-tree"):
		return "tree"
	case strings.HasSuffix(p, "/managed-resources"):
		return "managed"
	case strings.HasSuffix(p, "/resource") && r.Method == http.MethodDelete:
		return "deleteResource"
	case r.Method == http.MethodDelete:
		return "delete"
	case q.Get("refresh") == "hard":
		return "hard-refresh"
	case q.Get("refresh") != "":
		return "refresh"
	}
	return "get"
}

// watch serves /api/v1/stream/applications like grpc-gateway: one
// {"result": event} per line, flushed; the current state first (ADDED).
func (f *fakeArgo) watch(w http.ResponseWriter, r *http.Request) {
	if f.sc.stream == streamUnsupported {
		http.NotFound(w, r)
		return
	}
	name := r.URL.Query().Get("name")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(200)
	w.(http.Flusher).Flush()
	sent, first := -1, true
	for {
		f.mu.Lock()
		ch := f.changed
		var line []byte
		if f.rv != sent && f.sc.stream != streamSilent {
			switch {
			case f.app != nil && f.app.Name == name:
				if f.freshHealth != "" {
					f.servedFresh[f.freshHealth] = true
				}
				typ := watch.Modified
				if first {
					typ = watch.Added
				}
				line, _ = json.Marshal(map[string]any{"result": v1alpha1.ApplicationWatchEvent{Type: typ, Application: *f.app}})
			case !first:
				line, _ = json.Marshal(map[string]any{"result": v1alpha1.ApplicationWatchEvent{Type: watch.Deleted, Application: *newApp(name)}})
			}
			sent = f.rv
		}
		f.mu.Unlock()
		if line != nil {
			if _, err := w.Write(append(line, '\n')); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			first = false
			if f.sc.stream == streamDrop {
				hijackAndReset(w)
				return
			}
			if f.sc.stream == streamStall {
				<-r.Context().Done()
				return
			}
		}
		select {
		case <-ch:
		case <-r.Context().Done():
			return
		case <-f.stop:
			return
		}
	}
}

func hijackAndReset(w http.ResponseWriter) {
	c, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0) // RST, not FIN
	}
	c.Close()
}
