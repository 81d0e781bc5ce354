package step

// A fake Argo CD API server that models one application's lifecycle the way
// argo-cd's API server and controller behave (see the notes on each piece),
// serves argo-cd's real v1alpha1 types, and injects the faults a real server
// will not produce on demand.

import (
	"encoding/json"
	"fmt"
	"io"
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
	resyncsAfter int           // if > 0: periodic reconciliations stop after this many once our operation finished
	earlierOp    bool          // an operation we did not start is running at start
	earlierStuck bool          // ... and never ends unless terminated
	ourOpStuck   bool          // our operation never ends unless terminated
	conflicts    int           // first N syncs: another operation is already in progress
	fail503      int           // next N requests: 503 from a proxy
	reject401    int           // first N requests: token not yet valid
	stream       streamMode
	// lazyHeaders: the stream's headers go out with its first event, as
	// Argo CD's (grpc-gateway) do: a watch of an absent app never answers.
	lazyHeaders bool
	tree        []v1alpha1.ResourceNode
	managed     []*v1alpha1.ResourceDiff
	deleteStuck bool // the Application's finalizer never completes
	// A server that answers GET ?refresh at once, without a reconciliation,
	// and whose controller neither refreshes after an operation nor has
	// reconciled lately: the answer predates the sync.
	refreshIgnored bool
	// The controller misses the update that sets our operation and starts
	// it only after a later change of the app (a refresh request).
	missesOp bool
	// manual: the controller does nothing until the test drives it
	// (startOurOp, begin/end of a reconciliation, finishOurOp) or calls auto.
	manual bool
	// syncAnswerLost: the first sync request is processed, and once its
	// operation has finished the connection is reset: the answer is lost.
	syncAnswerLost bool
	// syncLate: the first sync request is held unprocessed (the client gives
	// up on it) until the step asks for a refresh after a later operation of
	// ours finished; then it is processed.
	syncLate bool
	// syncAnswerLate: the first sync request is processed after the client
	// gave up on it (closed its connection at its request timeout), once
	// the step has either read the app twice since (it waits for the
	// operation) or seen an operation of ours finish (it sent the request
	// again at once). Its operation still starts; the answer goes nowhere.
	syncAnswerLate bool
	// syncDropped: the first sync request is held until the client gives
	// up on it, then dropped (never processed), and the next syncDropped
	// requests answer 503.
	syncDropped int
	// garbleCreate: the next N creates are processed but answered 200 with
	// a body that is not the JSON Argo CD sends.
	garbleCreate int
	// echoAuth: error answers quote the request's Authorization header.
	echoAuth bool
	// tick is the controller loop's period; 5ms by default.
	tick time.Duration
	// cacheBehind: after our sync the controller's cache lacks the
	// Deployment it created (Argo CD 3.6 after a re-created CRD): every
	// reconciliation shows the app Healthy, OutOfSync, the Deployment
	// Missing, until a hard refresh.
	cacheBehind bool
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
	resyncsAfterOp      int // periodic reconciliations since our sync finished (scenario.resyncsAfter)
	freshIdx, duringIdx int
	freshHealth         health.HealthStatusCode // health of the last reconcile that started after our sync finished; "" if the current health is not such
	opNoticed           bool                    // missesOp: a refresh came after our operation was set
	deleting            time.Time
	auto                bool      // the controller runs by itself (not manual, or handed over)
	frozen              time.Time // the controller's clock when set (manual tests)
	ourPending, ourDone int       // our operations requested and not finished; finished
	freshGen            int       // ourDone when the shown health's reconciliation began
	history             []snapshot
	refreshAt           []int         // f.rv when each refresh request had set its annotation
	heldSync            chan struct{} // syncLate: closed to release the held request
	onHardRefresh       func(f *fakeArgo)
	hardRefreshed       bool // a hard refresh was asked for (cacheBehind ends)

	// record
	calls            map[string]int
	servedFresh      map[int]map[health.HealthStatusCode]bool // fresh health the step was shown, by ourDone when its reconciliation began
	syncRequests     []string
	deletedResources []string
	changes          []string // deletions requested, in order
	trail            []string // gets and syncs in order: "get", "get 503", "sync"
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
	if sc.tick == 0 {
		sc.tick = 5 * time.Millisecond
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
	f := &fakeArgo{t: t, sc: sc, changed: make(chan struct{}), calls: map[string]int{}, auto: !sc.manual,
		servedFresh: map[int]map[health.HealthStatusCode]bool{}, conns: map[net.Conn]struct{}{}, stop: make(chan struct{}),
		heldSync: make(chan struct{})}
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
	f.mu.Lock()
	f.releaseHeldSync()
	f.mu.Unlock()
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

// snapshot is one version of the app, as Argo CD's API server would send it
// in the event for that version.
type snapshot struct {
	rv          int
	data        []byte // nil: the app is gone
	annotated   bool   // carries the refresh annotation
	freshHealth health.HealthStatusCode
	freshGen    int
}

// bump records a change: new resourceVersion, the version's snapshot, wake
// the streams and the waiting requests.
func (f *fakeArgo) bump() {
	f.rv++
	sn := snapshot{rv: f.rv, freshHealth: f.freshHealth, freshGen: f.freshGen}
	if f.app != nil {
		f.app.ResourceVersion = fmt.Sprint(f.rv)
		sn.data, _ = json.Marshal(f.app)
		_, sn.annotated = f.app.Annotations[v1alpha1.AnnotationKeyRefresh]
	}
	f.history = append(f.history, sn)
	f.notify()
}

// notify wakes everything that waits for the fake (lock held).
func (f *fakeArgo) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// clock is the controller's clock: frozen by manual tests that need two
// events in one second.
func (f *fakeArgo) clock() time.Time {
	if !f.frozen.IsZero() {
		return f.frozen
	}
	return time.Now()
}

func (f *fakeArgo) setHealth(h health.HealthStatusCode) {
	if h == "" {
		h = health.HealthStatusMissing
	}
	msg := ""
	if h != health.HealthStatusHealthy {
		msg = "web is " + string(h)
	}
	now := metav1.NewTime(f.clock())
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
	if f.sc.cacheBehind && f.ourDone > 0 && !f.hardRefreshed {
		f.app.Status.Sync.Status = v1alpha1.SyncStatusCodeOutOfSync
		f.app.Status.Resources[0].Status = v1alpha1.SyncStatusCodeOutOfSync
		f.app.Status.Resources[0].Health = &v1alpha1.HealthStatus{Status: health.HealthStatusMissing}
	}
	for i := range f.sc.tree {
		n := &f.sc.tree[i]
		if n.Kind == "Deployment" || n.Kind == "Pod" {
			n.Health = &v1alpha1.HealthStatus{Status: h, Message: msg}
		}
	}
}

// A reconciliation, as Argo CD's controller runs one (processAppRefreshQueueItem):
// it reads the app and judges health at its start, and writes at its end,
// removing the refresh annotation if it had read one, whatever the
// annotation says by then (persistAppStatus's merge patch). Reconciliations
// are serialized.
type reconciliation struct {
	annotated bool
	health    health.HealthStatusCode
	fresh     bool // began after our last operation finished, none of ours pending
	gen       int
}

// beginLocked starts a reconciliation: a fresh one shows the next scripted
// health, any other stale health.
func (f *fakeArgo) beginLocked(stale bool) *reconciliation {
	r := &reconciliation{gen: f.ourDone}
	_, r.annotated = f.app.Annotations[v1alpha1.AnnotationKeyRefresh]
	r.fresh = !stale && f.ourDone > 0 && f.ourPending == 0
	switch {
	case r.fresh:
		r.health = f.sc.after[min(f.freshIdx, len(f.sc.after)-1)]
		f.freshIdx++
	case f.ourPending > 0 && !f.ourOpStart.IsZero() && len(f.sc.duringSync) > 0:
		r.health = f.sc.duringSync[f.duringIdx%len(f.sc.duringSync)]
		f.duringIdx++
	default:
		r.health = f.app.Status.Health.Status // same health, new reconciledAt
	}
	return r
}

func (f *fakeArgo) endLocked(r *reconciliation) {
	if f.app == nil {
		return
	}
	f.lastReconcile = time.Now()
	f.setHealth(r.health)
	f.freshHealth, f.freshGen = "", r.gen
	if r.fresh {
		f.freshHealth = r.health
	}
	if r.annotated {
		delete(f.app.Annotations, v1alpha1.AnnotationKeyRefresh)
	}
	f.bump()
}

// reconcile runs a whole reconciliation at once (the automatic controller).
func (f *fakeArgo) reconcile(stale bool) { f.endLocked(f.beginLocked(stale)) }

// --- explicit steps for race tests (scenario.manual) ---

// beginReconcile starts a reconciliation the test will end.
func (f *fakeArgo) beginReconcile() *reconciliation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.beginLocked(false)
}

func (f *fakeArgo) endReconcile(r *reconciliation) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.endLocked(r)
}

// startOurOp starts the requested operation of ours.
func (f *fakeArgo) startOurOp() {
	f.mu.Lock()
	defer f.mu.Unlock()
	op := *f.app.Operation
	f.app.Status.OperationState = &v1alpha1.OperationState{Operation: op, Phase: synccommon.OperationRunning, StartedAt: metav1.NewTime(f.clock())}
	f.ourOpStart = time.Now()
	f.bump()
}

func (f *fakeArgo) finishOurOp() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finishOp(synccommon.OperationSucceeded, "successfully synced (all tasks run)", nil)
}

// annotate sets the refresh annotation as another client's GET ?refresh does.
func (f *fakeArgo) annotate(v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.app.Annotations == nil {
		f.app.Annotations = map[string]string{}
	}
	f.app.Annotations[v1alpha1.AnnotationKeyRefresh] = v
	f.bump()
}

func (f *fakeArgo) freeze(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = t
}

// handOver lets the controller run by itself from now on.
func (f *fakeArgo) handOver() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auto = true
}

// waitFor blocks until cond (called with the lock held) holds. The bound
// only keeps a broken step from hanging the test.
func (f *fakeArgo) waitFor(what string, cond func() bool) {
	f.t.Helper()
	limit := time.After(15 * time.Second)
	for {
		f.mu.Lock()
		ok, ch := cond(), f.changed
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-limit:
			f.t.Fatalf("the step never got to: %s", what)
		}
	}
}

func (f *fakeArgo) releaseHeldSync() {
	select {
	case <-f.heldSync:
	default:
		close(f.heldSync)
	}
}

// outage makes the API fail: every request 503, open streams cut.
func (f *fakeArgo) outageLocked() {
	f.sc.fail503 = 1 << 30
	for c := range f.conns {
		c.Close()
	}
}

func (f *fakeArgo) controller() {
	tick := time.NewTicker(f.sc.tick)
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
	if a == nil || !f.auto {
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
		a.Status.OperationState = &v1alpha1.OperationState{Operation: op, Phase: synccommon.OperationRunning, StartedAt: metav1.NewTime(f.clock())}
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
				f.postOpPending = !f.sc.refreshIgnored
			}
		} else if !f.sc.earlierStuck && now.Sub(st.StartedAt.Time) >= 150*time.Millisecond {
			f.finishOp(synccommon.OperationSucceeded, "successfully synced (all tasks run)", nil)
		}
	}
	_, annotated := a.Annotations[v1alpha1.AnnotationKeyRefresh]
	switch {
	case f.postOpPending:
		// The controller refreshes the app right after an operation.
		f.postOpPending = false
		f.reconcile(f.sc.staleAfterOp)
	case annotated && !f.sc.refreshIgnored:
		f.reconcile(false)
	case now.Sub(f.lastReconcile) >= f.sc.resync:
		if f.sc.resyncsAfter > 0 && !f.ourOpFinished.IsZero() {
			if f.resyncsAfterOp >= f.sc.resyncsAfter {
				return
			}
			f.resyncsAfterOp++
		}
		f.reconcile(false)
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
	if ours(&st.Operation) {
		f.ourPending--
		f.ourDone++
		f.ourOpFinished = time.Now()
	}
	now := metav1.NewTime(f.clock())
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
	f.served(f.freshHealth, f.freshGen)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(f.app)
}

func (f *fakeArgo) served(h health.HealthStatusCode, gen int) {
	if h == "" {
		return
	}
	if f.servedFresh[gen] == nil {
		f.servedFresh[gen] = map[health.HealthStatusCode]bool{}
	}
	f.servedFresh[gen][h] = true
}

// shownFreshHealthy reports whether the step was shown Healthy (or h) from
// a reconciliation that began after the last of our operations finished,
// with none of ours pending.
func (f *fakeArgo) shownFresh(h ...health.HealthStatusCode) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range h {
		if f.ourPending == 0 && f.servedFresh[f.ourDone][c] {
			return true
		}
	}
	return false
}

// fault answers a failed request, quoting the credentials when echoAuth.
func (f *fakeArgo) fault(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if f.sc.echoAuth {
		msg += "; request headers: Authorization: " + r.Header.Get("Authorization") + `, {"token": "` + fakeToken + `"}, raw ` + fakeToken
	}
	http.Error(w, msg, status)
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
		if kind == "get" {
			f.trail = append(f.trail, "get 503")
		}
		f.notify()
		f.mu.Unlock()
		f.fault(w, r, 503, "upstream connect error or disconnect/reset before headers")
		return
	}
	f.notify()
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
		if f.sc.garbleCreate > 0 {
			// A proxy's page, or the JSON cut short, after Argo CD did it.
			f.sc.garbleCreate--
			body := "<html><body>502 Bad Gateway</body></html>"
			if f.sc.garbleCreate%2 == 1 {
				data, _ := json.Marshal(f.app)
				body = string(data[:len(data)/2])
			}
			w.WriteHeader(200)
			io.WriteString(w, body)
			return
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
		f.trail = append(f.trail, "get")
		f.sendApp(w)
	case "refresh", "hard-refresh":
		if kind == "hard-refresh" {
			f.hardRefreshed = true
		}
		if kind == "hard-refresh" && f.onHardRefresh != nil {
			f.onHardRefresh(f)
			f.onHardRefresh = nil
			f.fault(w, r, 503, "upstream connect error or disconnect/reset before headers")
			return
		}
		if f.sc.refreshIgnored {
			f.sendApp(w)
			return
		}
		f.refresh(w, r)
	case "sync":
		var req struct {
			Name  string           `json:"name"`
			Prune bool             `json:"prune"`
			Infos []*v1alpha1.Info `json:"infos"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		f.syncRequests = append(f.syncRequests, req.Name)
		f.trail = append(f.trail, "sync")
		if f.sc.conflicts > 0 {
			f.sc.conflicts--
			gwError(w, 400, 9, "error setting app operation: rpc error: code = FailedPrecondition desc = another operation is already in progress")
			return
		}
		n := len(f.syncRequests)
		if f.sc.syncLate && n == 1 && f.ourDone == 0 {
			// Held: the client gives up; processed when released.
			f.mu.Unlock()
			<-f.heldSync
			f.mu.Lock()
			if f.app == nil {
				return
			}
		}
		if f.sc.syncDropped > 0 && n == 1 {
			f.awaitGoneLocked(r)
			f.sc.fail503, f.sc.syncDropped = f.sc.syncDropped, 0
			return
		}
		if f.sc.syncAnswerLate && n == 1 {
			f.holdUntilGivenUp(r)
			if f.app == nil {
				return
			}
		}
		st := f.app.Status.OperationState
		if f.app.Operation != nil || st != nil && !st.Phase.Completed() {
			gwError(w, 400, 9, "another operation is already in progress")
			return
		}
		if f.sc.echoAuth && n == 1 {
			f.fault(w, r, 400, "application spec is invalid")
			return
		}
		f.app.Operation = &v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{Revision: "main", Prune: req.Prune},
			InitiatedBy: v1alpha1.OperationInitiator{Username: "deploystep"}, Info: req.Infos}
		if ours(f.app.Operation) {
			f.ourPending++
			f.freshHealth = ""
		}
		f.bump()
		if f.sc.syncAnswerLost && n == 1 {
			// Processed; the answer is lost once the operation has finished.
			for f.ourPending > 0 {
				ch := f.changed
				f.mu.Unlock()
				<-ch
				f.mu.Lock()
			}
			f.mu.Unlock() // Hijack reports the connection's state to f.track
			hijackAndReset(w)
			f.mu.Lock()
			return
		}
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

// holdUntilGivenUp (lock held) keeps a sync request unprocessed until the
// client has closed its connection, then until the step has read the app
// twice more or an operation of ours has finished (scenario.syncAnswerLate).
func (f *fakeArgo) holdUntilGivenUp(r *http.Request) {
	f.awaitGoneLocked(r)
	gets := f.calls["get"]
	f.untilLocked(func() bool { return f.calls["get"] >= gets+2 || f.ourDone > 0 })
}

// awaitGoneLocked (lock held) waits until the client has closed r's
// connection, or the fake stops.
func (f *fakeArgo) awaitGoneLocked(r *http.Request) {
	f.mu.Unlock()
	io.Copy(io.Discard, r.Body) // the server notices the closed connection only after the body
	select {
	case <-r.Context().Done():
	case <-f.stop:
	}
	f.mu.Lock()
}

// untilLocked (lock held) waits until cond (called with the lock held)
// holds; false if the fake stopped first.
func (f *fakeArgo) untilLocked(cond func() bool) bool {
	for !cond() {
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-f.stop:
		}
		f.mu.Lock()
		select {
		case <-f.stop:
			return false
		default:
		}
	}
	return true
}

// refresh is argocd-server's Get with ?refresh (server/application Get,
// util/argo RefreshApp): a merge patch sets the annotation (a new version
// only when its value changes), then the answer is the first version after
// the patch's that lacks the annotation.
func (f *fakeArgo) refresh(w http.ResponseWriter, r *http.Request) {
	if f.app.Annotations == nil {
		f.app.Annotations = map[string]string{}
	}
	if v := r.URL.Query().Get("refresh"); f.app.Annotations[v1alpha1.AnnotationKeyRefresh] != v {
		f.app.Annotations[v1alpha1.AnnotationKeyRefresh] = v
		f.bump()
	}
	f.opNoticed = f.app.Operation != nil
	f.refreshAt = append(f.refreshAt, f.rv)
	if f.sc.syncLate && f.ourDone > 0 {
		// The late request goes through before this one.
		f.sc.syncLate = false
		f.releaseHeldSync()
		if !f.untilLocked(func() bool { return f.ourPending != 0 || f.app == nil }) {
			return
		}
	}
	minRV := f.rv
	for i := max(len(f.history)-1, 0); ; {
		for ; i < len(f.history); i++ {
			sn := f.history[i]
			if sn.rv <= minRV || sn.annotated {
				continue
			}
			if sn.data == nil {
				gwError(w, 404, 5, "not found")
				return
			}
			f.served(sn.freshHealth, sn.freshGen)
			w.Header().Set("Content-Type", "application/json")
			w.Write(sn.data)
			return
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-r.Context().Done():
			f.mu.Lock()
			return
		}
		f.mu.Lock()
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
	if !f.sc.lazyHeaders {
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
	}
	sent, first := -1, true
	for {
		f.mu.Lock()
		ch := f.changed
		var line []byte
		if f.rv != sent && f.sc.stream != streamSilent {
			switch {
			case f.app != nil && f.app.Name == name:
				f.served(f.freshHealth, f.freshGen)
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
