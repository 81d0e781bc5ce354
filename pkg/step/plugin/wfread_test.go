package plugin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/deployctl/deployctl/pkg/exitcode"
	pt "github.com/deployctl/deployctl/pkg/step/plugin/plugintest"
)

// heldServer is a server whose API holds every read until release (also
// at the test's end).
func heldServer(t *testing.T) (*pt.Kube, *Server, func()) {
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	s, _ := kubeServer(t, k)
	release := k.Hold()
	t.Cleanup(release)
	return k, s, release
}

// lookups runs one lookup per template at once, each started only after
// the previous one has joined a read (so the order they began in is
// known), and returns what each got.
type lookupResult struct {
	id  identity
	err error
}

func startLookups(t *testing.T, s *Server, k *pt.Kube, apps []string, joined func(n int) bool) (wait func() []lookupResult) {
	t.Helper()
	res := make([]lookupResult, len(apps))
	var wg sync.WaitGroup
	for i, app := range apps {
		wf, node := lookupNode(t, k, syncTemplate(app))
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i].id, res[i].err = s.lookup(context.Background(), wf, node)
		}()
		eventually(t, fmt.Sprintf("lookup %d waits for a read", i+1), func() bool { return joined(i + 1) })
	}
	return func() []lookupResult { wg.Wait(); return res }
}

// Many lookups at once read the Workflow once per round, not once each:
// the first starts a read; the 49 that begin while it runs share the
// next one; every lookup still gets its own node's id.
func TestLookupsShareOneRead(t *testing.T) {
	k := pt.NewKube(t, "ns", "wf", "uid-1")
	var apps []string
	for i := range 50 {
		apps = append(apps, fmt.Sprintf("a%02d", i))
	}
	s, _ := kubeServer(t, k)
	key := wfKey{"ns", "wf", "uid-1"}
	release := k.Hold()
	defer release()
	wait := startLookups(t, s, k, apps, func(n int) bool {
		if n == 1 {
			return k.Gets() == 1 // the first read is at the server, held
		}
		return s.reads.pending(key) == n-1
	})
	release()
	for i, r := range wait() {
		if r.err != nil || r.id.node != "wf.deploy."+apps[i] || r.id.syncID != wantID("uid-1", "wf.deploy."+apps[i], startedAt) {
			t.Errorf("lookup of %s: %+v %v", apps[i], r.id, r.err)
		}
	}
	if got := k.Gets(); got != 2 {
		t.Errorf("50 lookups in two rounds read the Workflow %d times, want 2", got)
	}
	// A read is not kept past its round: the next lookup reads again.
	wf, node := lookupNode(t, k, syncTemplate("a00"))
	if _, err := s.lookup(context.Background(), wf, node); err != nil || k.Gets() != 3 {
		t.Errorf("a later lookup: %v, %d reads, want 3", err, k.Gets())
	}
}

// A lookup takes only a read that started after it began: a start
// persisted while an earlier read is in flight (that read's answer
// already taken without it) is seen by the lookup that began after it,
// at its first try; so is a workflow retry's new start.
func TestSharedReadIsFresh(t *testing.T) {
	k, s, release := heldServer(t)
	k.SetStartedAt("")
	waitA := startLookups(t, s, k, []string{"a"}, func(int) bool { return k.Gets() == 1 })
	k.SetStartedAt(startedAt) // after read 1 took its answer
	waitB := startLookups(t, s, k, []string{"b"}, func(int) bool { return s.reads.pending(wfKey{"ns", "wf", "uid-1"}) == 1 })
	release()
	if r := waitA()[0]; exitcode.Of(r.err) != exitcode.Transient || !strings.Contains(fmt.Sprint(r.err), "no status.startedAt yet") {
		t.Errorf("lookup of a, whose read came before the start: %+v %v", r.id, r.err)
	}
	if r := waitB()[0]; r.err != nil || r.id.syncID != wantID("uid-1", "wf.deploy.b", startedAt) {
		t.Errorf("lookup of b, begun after the start was persisted, got %+v %v: served a read begun before it", r.id, r.err)
	}
	if got := k.Gets(); got != 2 {
		t.Errorf("%d reads, want 2", got)
	}
}

// An error of a shared read reaches every lookup waiting for it with its
// class: Transient (tried again), a permanent API answer (the node fails
// at once with the hint), Failure.
func TestSharedReadErrorsKeepTheirClass(t *testing.T) {
	cases := []struct {
		name  string
		setup func(k *pt.Kube)
		check func(err error) bool
		want  string
	}{
		{"API down", func(k *pt.Kube) { k.FailWith(http.StatusServiceUnavailable) },
			func(err error) bool { return exitcode.Of(err) == exitcode.Transient }, "reading workflow ns/wf: HTTP 503"},
		{"forbidden", func(k *pt.Kube) { k.FailWith(http.StatusForbidden) },
			func(err error) bool { var ae *apiError; return errors.As(err, &ae) && ae.permanent() }, "HTTP 403"},
		{"replaced", func(k *pt.Kube) { k.UID = "uid-2" },
			func(err error) bool { return exitcode.Of(err) == exitcode.Failure }, "has uid uid-2, not uid-1: it was replaced"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := pt.NewKube(t, "ns", "wf", "uid-1")
			apps := []string{"a", "b", "c", "d", "e"}
			s, _ := kubeServer(t, k)
			wfRefs := make([]workflowRef, len(apps)) // the uid before the setup
			nodes := make([]string, len(apps))
			for i, app := range apps {
				wfRefs[i], nodes[i] = lookupNode(t, k, syncTemplate(app))
			}
			c.setup(k)
			release := k.Hold()
			defer release()
			var wg sync.WaitGroup
			errs := make([]error, len(apps))
			for i := range apps {
				wg.Add(1)
				go func() { defer wg.Done(); _, errs[i] = s.lookup(context.Background(), wfRefs[i], nodes[i]) }()
				if i == 0 {
					eventually(t, "the first read held", func() bool { return k.Gets() == 1 })
				} else {
					eventually(t, "lookups share the next read", func() bool { return s.reads.pending(wfKey{"ns", "wf", "uid-1"}) == i })
				}
			}
			release()
			wg.Wait()
			for i, err := range errs {
				if err == nil || !c.check(err) || !strings.Contains(err.Error(), c.want) {
					t.Errorf("lookup %d: %v (class %d), want %q of its class", i, err, exitcode.Of(err), c.want)
				}
			}
			if k.Gets() != 2 {
				t.Errorf("%d reads, want 2", k.Gets())
			}
		})
	}
}

// A lookup that stops waiting (its job's context ends) is Transient and
// leaves the read to the others.
func TestLookupStopsWaiting(t *testing.T) {
	k, s, release := heldServer(t)
	wf, node := lookupNode(t, k, syncTemplate("a"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := s.lookup(ctx, wf, node); done <- err }()
	eventually(t, "the read held", func() bool { return k.Gets() == 1 })
	cancel()
	if err := <-done; exitcode.Of(err) != exitcode.Transient || !strings.Contains(err.Error(), "reading workflow ns/wf: context canceled") {
		t.Errorf("stopped lookup: %v", err)
	}
	release()
	if _, err := s.lookup(context.Background(), wf, node); err != nil {
		t.Errorf("the next lookup: %v", err)
	}
}

// One read at a time in the process: a read of another workflow waits
// for the running one (the memory bound holds whatever the workflows).
func TestOneReadAtATime(t *testing.T) {
	k, s, release := heldServer(t)
	waitA := startLookups(t, s, k, []string{"a"}, func(int) bool { return k.Gets() == 1 })
	other := workflowRef{Namespace: "ns", Name: "wf-other", UID: "uid-9"}
	_, node := lookupNode(t, k, syncTemplate("a"))
	done := make(chan error)
	go func() { _, err := s.lookup(context.Background(), other, node); done <- err }()
	eventually(t, "the other workflow's read sent or waiting its turn", func() bool {
		s.reads.mu.Lock()
		q := s.reads.byKey[wfKey{"ns", "wf-other", "uid-9"}]
		waiting := q != nil && q.running && len(s.reads.one) == 1
		s.reads.mu.Unlock()
		return waiting || k.MaxInFlight() > 1
	})
	release()
	if r := waitA()[0]; r.err != nil {
		t.Errorf("lookup of a: %v", r.err)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("the other workflow (not served): %v", err)
	}
	if n := k.MaxInFlight(); n != 1 {
		t.Errorf("%d reads at once, want 1", n)
	}
}
