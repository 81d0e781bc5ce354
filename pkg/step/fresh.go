package step

import (
	"time"

	"github.com/deployctl/deployctl/pkg/step/argocd"
)

// Proving that health is fresh (docs/step-contract.md, "Fresh health"):
// the step may judge health only from a reconciliation that *began* after its
// operation finished. No clock is compared; the proof uses three facts of
// Argo CD's application controller and API server (v2.14 sources:
// controller/appcontroller.go processAppRefreshQueueItem, persistAppStatus;
// server/application/application.go Get; util/argo RefreshApp):
//
//	F1 Reconciliations of one application are serialized (one refresh
//	   queue, a key is never processed twice at once), and each writes the
//	   status at most once, at its end. Only those writes change
//	   status.health, status.sync and status.reconciledAt, and only they
//	   remove the refresh annotation.
//	F2 GET ?refresh patches the refresh annotation and answers with the
//	   first later version (resourceVersion greater than the patch's) that
//	   lacks the annotation. Such a version follows a write that removed
//	   it: a reconciliation that ended after the request was sent.
//	F3 resourceVersions grow with every write (Argo CD's server compares
//	   them as integers too).
//
// Levels, for the newest view the step holds after its operation finished:
//
//	0  nothing proven (the view in which the operation was first seen
//	   finished is the reference);
//	1  a reconciliation R1 wrote the status after the operation finished;
//	2  a reconciliation R2 wrote after R1 had written. By F1 R2 began after
//	   R1 ended, so after the operation finished: the health in the view
//	   (written by R2 or a later one) is fresh.
//
// A level rises by one when (a) a view shows reconciliation-written fields
// that differ from the previous view (F1: a write happened in between), or
// (b) a refresh sent at level L is answered with a version newer than every
// version seen when it was sent (F2, F3): the answer is level L+1. Equal
// values prove nothing and raise nothing; a missed rise only costs another
// refresh.
type freshness struct {
	armed bool
	epoch int // bumped on every arm, so an answer to an older refresh is not credited
	level int
	rv    int64 // the last view observed
	mark  reconMark
}

// reconMark holds the fields only a reconciliation writes (F1).
type reconMark struct {
	health, healthMsg, sync, revision string
	reconciledAt                      time.Time
	refreshPending                    bool
}

func markOf(a *argocd.Application) reconMark {
	m := reconMark{health: string(a.Status.Health.Status), healthMsg: a.Status.Health.Message,
		sync: string(a.Status.Sync.Status), revision: a.Status.Sync.Revision}
	if a.Status.ReconciledAt != nil {
		m.reconciledAt = *a.Status.ReconciledAt
	}
	_, m.refreshPending = a.Metadata.Annotations[refreshAnnotation]
	return m
}

// refreshAnnotation is argocd.argoproj.io/refresh (v1alpha1.AnnotationKeyRefresh).
const refreshAnnotation = "argocd.argoproj.io/refresh"

// written reports whether a reconciliation must have written between views
// with marks m and n: a field only it writes changed, or the refresh
// annotation (which only it removes) disappeared.
func (m reconMark) written(n reconMark) bool {
	return m.health != n.health || m.healthMsg != n.healthMsg || m.sync != n.sync || m.revision != n.revision ||
		!m.reconciledAt.Equal(n.reconciledAt) || (m.refreshPending && !n.refreshPending)
}

// arm starts over from the view in which the operation was seen finished.
func (f *freshness) arm(app *argocd.Application) {
	*f = freshness{armed: true, epoch: f.epoch + 1, rv: rvOf(app), mark: markOf(app)}
}

// observe takes the next view in resourceVersion order.
func (f *freshness) observe(app *argocd.Application) {
	rv := rvOf(app)
	if !f.armed || rv <= f.rv {
		return
	}
	m := markOf(app)
	if f.mark.written(m) {
		f.level = min(f.level+1, 2)
	}
	f.rv, f.mark = rv, m
}

// credit takes the answer to a refresh sent at level sentLevel while the
// newest version seen was sentRV; it reports whether the answer proved
// anything (F2 holds only for a version newer than sentRV).
func (f *freshness) credit(app *argocd.Application, epoch, sentLevel int, sentRV int64) bool {
	if !f.armed || epoch != f.epoch || sentRV <= 0 || rvOf(app) <= sentRV {
		return false
	}
	f.observe(app)
	f.level = max(f.level, min(sentLevel+1, 2))
	return true
}

func (f *freshness) fresh() bool { return f.armed && f.level >= 2 }
