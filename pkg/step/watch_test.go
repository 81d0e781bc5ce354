package step

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/argocd"
	"github.com/deployctl/deployctl/pkg/step/argocd/appstatus"
)

func appAt(rv string, h appstatus.Health) *argocd.Application {
	a := &argocd.Application{}
	a.Metadata.Name, a.Metadata.ResourceVersion, a.Status.Health.Status = "x", rv, h
	return a
}

// The source never steps back: a view older than one already published
// (a GET answer racing a stream event) is dropped.
func TestSourceNeverStepsBack(t *testing.T) {
	s := &appSource{changed: make(chan struct{})}
	s.publish(appAt("10", appstatus.Progressing))
	s.publish(appAt("12", appstatus.Healthy))
	s.publish(appAt("11", appstatus.Degraded))
	if v := s.current(); v.rv != 12 || v.seq != 2 {
		t.Fatalf("current %+v", v)
	}
	s.publish(appAt("12", appstatus.Healthy)) // same version again: a new observation
	s.publish(nil)                            // gone
	if v := s.current(); !v.gone() || v.seq != 4 {
		t.Fatalf("current %+v", v)
	}
}

func TestSourceWait(t *testing.T) {
	r := &runner{t: testTiming(), log: func(string, ...any) {}}
	s := &appSource{r: r, changed: make(chan struct{})}
	s.publish(appAt("1", appstatus.Progressing))
	go func() {
		time.Sleep(20 * time.Millisecond)
		s.publish(appAt("2", appstatus.Healthy))
	}()
	var seen []appstatus.Health
	err := s.wait(context.Background(), func(v view) (bool, error) {
		seen = append(seen, v.app.Status.Health.Status)
		return v.app.Status.Health.Status == appstatus.Healthy, nil
	})
	if err != nil || len(seen) != 2 {
		t.Fatalf("%v %v", err, seen)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	never := func(view) (bool, error) { return false, nil }
	if err := s.wait(ctx, never); err != errWaitDeadline {
		t.Fatalf("deadline: %v", err)
	}
	if code := exitcode.Of(s.deadlineError("late")); code != exitcode.Timeout {
		t.Fatalf("deadline while the API answers: exit %d", code)
	}
	s.setFailing(&argocd.NetError{Op: "get", Err: io.ErrUnexpectedEOF})
	if code := exitcode.Of(s.deadlineError("late")); code != exitcode.Transient {
		t.Fatalf("deadline while the API fails: exit %d", code)
	}

	canceled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if code := exitcode.Of(s.wait(canceled, never)); code != exitcode.Transient {
		t.Fatalf("interrupted: exit %d", code)
	}

	boom := errors.New("boom")
	go func() { time.Sleep(10 * time.Millisecond); s.setFatal(boom) }()
	if err := s.wait(context.Background(), never); err != boom {
		t.Fatalf("fatal: %v", err)
	}
}
