package step

import (
	"testing"
	"time"

	"github.com/deployctl/deployctl/pkg/step/argocd"
	"github.com/deployctl/deployctl/pkg/step/argocd/appstatus"
)

// ver is one version of the app as the step sees it.
func ver(rv string, h appstatus.Health, reconciledSec int, annotated bool) *argocd.Application {
	a := appAt(rv, h)
	at := time.Date(2026, 1, 2, 3, 4, reconciledSec, 0, time.UTC)
	a.Status.ReconciledAt = &at
	if annotated {
		a.Metadata.Annotations = map[string]string{refreshAnnotation: "normal"}
	}
	return a
}

// The proof of freshness (fresh.go) on the histories of issue 18.
func TestFreshnessLevels(t *testing.T) {
	// The operation was seen finished in version 10: Healthy from before the
	// sync, a refresh annotation pending (someone's refresh).
	finished := ver("10", appstatus.Healthy, 5, true)

	t.Run("a stale reconciliation answering our refresh is level 1, not fresh", func(t *testing.T) {
		var f freshness
		f.arm(finished)
		// It began before the finish, read the annotation, writes the old
		// Healthy in the same second and removes the annotation.
		stale := ver("12", appstatus.Healthy, 5, false)
		if !f.credit(stale, f.epoch, 0, 10) || f.level != 1 || f.fresh() {
			t.Fatalf("level %d", f.level)
		}
		// The next refresh's answer (sent at level 1) is fresh.
		if !f.credit(ver("14", appstatus.Degraded, 6, false), f.epoch, 1, 12) || !f.fresh() {
			t.Fatalf("level %d", f.level)
		}
	})
	t.Run("two observed reconciliation writes are fresh", func(t *testing.T) {
		var f freshness
		f.arm(finished)
		f.observe(ver("11", appstatus.Healthy, 5, true)) // a write of someone else: nothing a reconciliation writes changed
		if f.level != 0 {
			t.Fatalf("level %d", f.level)
		}
		f.observe(ver("12", appstatus.Healthy, 5, false)) // the annotation removed: a reconciliation wrote
		f.observe(ver("13", appstatus.Healthy, 5, true))  // someone's refresh: no reconciliation
		if f.level != 1 {
			t.Fatalf("level %d", f.level)
		}
		f.observe(ver("15", appstatus.Progressing, 5, true)) // health changed: another reconciliation
		if !f.fresh() {
			t.Fatalf("level %d", f.level)
		}
	})
	t.Run("answers that prove nothing", func(t *testing.T) {
		var f freshness
		if f.credit(ver("20", appstatus.Healthy, 5, false), 0, 0, 10) {
			t.Fatal("credited before the operation finished")
		}
		f.arm(finished)
		epoch := f.epoch
		if f.credit(ver("10", appstatus.Healthy, 5, false), epoch, 1, 10) {
			t.Fatal("an answer no newer than what was seen when the refresh was sent proves nothing")
		}
		f.arm(ver("30", appstatus.Healthy, 9, false)) // a further operation of ours finished
		if f.credit(ver("31", appstatus.Healthy, 9, false), epoch, 1, 20) {
			t.Fatal("an answer to a refresh sent before the last operation finished proves nothing about it")
		}
		f.observe(ver("29", appstatus.Degraded, 1, false)) // older than the reference: ignored
		if f.level != 0 || f.rv != 30 {
			t.Fatalf("level %d rv %d", f.level, f.rv)
		}
	})
}

func TestTimingForNode(t *testing.T) {
	d := defaultTiming()
	short := d.forNode(20 * time.Second)
	if short.stallCheck != 2*time.Second || short.confirmDelay != time.Second || short.progressRefresh != 5*time.Second {
		t.Errorf("20s: %+v", short)
	}
	long := d.forNode(10 * time.Minute)
	if long.stallCheck != d.stallCheck || long.confirmDelay != d.confirmDelay || long.progressRefresh != d.progressRefresh {
		t.Errorf("10m: %+v", long)
	}
	if tiny := d.forNode(time.Second); tiny.stallCheck != d.pollInterval {
		t.Errorf("1s: stall check %s", tiny.stallCheck)
	}
}
