package workflow

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/deployctl/deployctl/pkg/kube"
)

// pickupRun is a run whose Workflow API bumps the resourceVersion on every
// update (the fake does not) and counts them in updates. (Reactors run
// under the fake's lock: they must not call Actions.)
func pickupRun(t *testing.T, w *wfv1.Workflow, updates *atomic.Int64) (func() *wfv1.Workflow, *wffake.Clientset, *bytes.Buffer) {
	t.Helper()
	wfs := wffake.NewSimpleClientset(w)
	var rv atomic.Int64
	rv.Store(100)
	wfs.PrependReactor("update", "workflows", func(a k8stesting.Action) (bool, runtime.Object, error) {
		o := a.(k8stesting.UpdateAction).GetObject().(*wfv1.Workflow)
		o.ResourceVersion = strconv.FormatInt(rv.Add(1), 10)
		if updates != nil {
			updates.Add(1)
		}
		return false, nil, nil // the tracker stores it
	})
	var logs bytes.Buffer
	await := func() *wfv1.Workflow {
		return AwaitPickup(context.Background(), &kube.Clients{Workflows: wfs}, w, Pickup{
			Poll: time.Millisecond, NudgeAfter: 5 * time.Millisecond, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	}
	return await, wfs, &logs
}

// resumed is a run just resumed: our update wrote resourceVersion 7.
func resumed() *wfv1.Workflow {
	return &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "d1", Namespace: "argo", ResourceVersion: "7"},
		Status:     wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning},
	}
}

func nudges(wfs *wffake.Clientset) int {
	n := 0
	for _, a := range wfs.Actions() {
		if a.GetVerb() == "update" {
			n++
		}
	}
	return n
}

// A run nobody writes after the resume is nudged, at most PickupMaxNudges
// times, and then followed anyway.
func TestAwaitPickupNudgesAStalledRun(t *testing.T) {
	w := resumed()
	r, wfs, logs := pickupRun(t, w, nil)
	got := r()
	if n := nudges(wfs); n != PickupMaxNudges {
		t.Errorf("%d nudges, want %d", n, PickupMaxNudges)
	}
	if got.Annotations[AnnotationResumeNudge] != strconv.Itoa(PickupMaxNudges) {
		t.Errorf("annotation %q", got.Annotations[AnnotationResumeNudge])
	}
	if !bytes.Contains(logs.Bytes(), []byte("following it anyway")) {
		t.Errorf("log:\n%s", logs)
	}
}

// The controller's first write after the resume ends the wait: a run the
// controller takes up at once is never nudged, and one it takes up after
// a nudge is nudged once.
func TestAwaitPickupStopsAtTheControllersWrite(t *testing.T) {
	w := resumed()
	r, wfs, _ := pickupRun(t, w, nil)
	taken := w.DeepCopy()
	taken.ResourceVersion = "8"
	if err := wfs.Tracker().Update(wfv1.SchemeGroupVersion.WithResource("workflows"), taken, "argo"); err != nil {
		t.Fatal(err)
	}
	if got := r(); got.ResourceVersion != "8" || nudges(wfs) != 0 {
		t.Errorf("resourceVersion %s, %d nudges; want 8, 0", got.ResourceVersion, nudges(wfs))
	}

	// The nudge re-admits the run: the controller writes right after it
	// (here: every read after the first update shows its write).
	w2 := resumed()
	var updates atomic.Int64
	r2, wfs2, _ := pickupRun(t, w2, &updates)
	wfs2.PrependReactor("get", "workflows", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if updates.Load() == 0 {
			return false, nil, nil
		}
		c := w2.DeepCopy()
		c.ResourceVersion = "controller"
		return true, c, nil
	})
	got := r2()
	if n := nudges(wfs2); n != 1 || got.ResourceVersion != "controller" {
		t.Errorf("%d nudges, resourceVersion %s; want 1, controller", n, got.ResourceVersion)
	}
}
