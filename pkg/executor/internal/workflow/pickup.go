package workflow

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/kube"
)

// AnnotationResumeNudge is written on a resumed run the workflow
// controller has not taken up (AwaitPickup); its value counts the nudges.
const AnnotationResumeNudge = "deployctl.dev/resume-nudge"

// Pickup is how AwaitPickup watches a resumed run.
type Pickup struct {
	Poll       time.Duration // how often the run is read
	NudgeAfter time.Duration // how long it may stay untouched (0: 10 s)
	Log        *slog.Logger
}

// PickupMaxNudges is how many nudges AwaitPickup writes at most.
const PickupMaxNudges = 3

// AwaitPickup waits until the workflow controller has taken up a run the
// executor just resumed, that is until anyone wrote the Workflow after us
// (its resourceVersion moved on), and returns the latest state read.
//
// Why: Argo Workflows' controller admits a run through its throttler,
// which it updates from the informer's events. A run that a retry brings
// back from Failed within moments of failing can lose its place there:
// the controller then logs "Workflow processing has been postponed due to
// max parallelism limit" (with no limit configured) and never looks at it
// again, so the run stays Running with its reset nodes unstarted. Seen on
// v4.0.7 in our e2e; the class of argoproj/argo-workflows#12103 and
// #14123. Any update of the Workflow re-admits it, so after nudgeAfter
// without a write the executor writes an annotation, up to maxNudges times;
// then it follows the run whatever happened (the action's deadline bounds
// the wait). A write by anyone, the controller or another client, counts
// as taken up: it re-admits the run too.
func AwaitPickup(ctx context.Context, cl *kube.Clients, w *wfv1.Workflow, p Pickup) *wfv1.Workflow {
	lg := p.Log
	wfs := cl.Workflows.ArgoprojV1alpha1().Workflows(w.Namespace)
	nudgeAfter, maxNudges := p.NudgeAfter, PickupMaxNudges
	if nudgeAfter == 0 {
		nudgeAfter = 10 * time.Second
	}
	ours := w.ResourceVersion
	since := time.Now()
	for nudges := 0; ; {
		select {
		case <-ctx.Done():
			return w
		case <-time.After(p.Poll):
		}
		got, err := wfs.Get(ctx, w.Name, metav1.GetOptions{})
		if err != nil {
			// follow reads it again and owns the error handling
			return w
		}
		w = got
		if w.ResourceVersion != ours {
			return w
		}
		if time.Since(since) < nudgeAfter {
			continue
		}
		if nudges == maxNudges {
			lg.Warn("the workflow controller has not taken up the resumed run; following it anyway",
				"workflow", w.Name, "nudges", nudges)
			return w
		}
		nudges++
		lg.Warn("the workflow controller has not taken up the resumed run; nudging it with an annotation",
			"workflow", w.Name, "waited", time.Since(since).Round(time.Second).String(), "nudge", nudges)
		n := w.DeepCopy()
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		n.Annotations[AnnotationResumeNudge] = strconv.Itoa(nudges)
		updated, err := wfs.Update(ctx, n, metav1.UpdateOptions{})
		switch {
		case err == nil:
			w, ours, since = updated, updated.ResourceVersion, time.Now()
		case apierrors.IsConflict(err):
			// someone wrote it meanwhile: the next read sees a new version
		default:
			lg.Warn("nudging the resumed run failed", "workflow", w.Name, "error", err.Error())
		}
	}
}
