package step

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/argocd"
)

// An appSource follows one application and always holds its newest known
// state. It prefers Argo CD's watch stream (a change arrives within
// milliseconds, and a quiet app costs no requests) and keeps it alive:
//
//   - the stream drops (connection refused or reset, proxy timeout, server
//     restart): reconnect with backoff. Argo CD sends the current state
//     first on every connection, so nothing that happened meanwhile is lost;
//   - the stream stays open but goes quiet for stallCheck (or sends nothing
//     at all for a poll period after connecting): GET once; if the app
//     changed without the stream saying so, the stream is stalled:
//     reconnect. A stall therefore costs at most stallCheck of latency, and
//     once one was seen the source GETs every poll period of silence;
//   - the endpoint does not exist (404/405/501, e.g. a proxy that does not
//     forward it): poll with GET every pollInterval for the rest of the run.
//
// Views are ordered by resourceVersion; an older one arriving late (a GET
// answer racing a stream event) is dropped, so a consumer never steps back.
type appSource struct {
	r    *runner
	name string

	mu      sync.Mutex
	latest  view
	maxRV   int64
	seq     uint64
	changed chan struct{} // closed and replaced on every new view
	fatal   error         // permanent failure: the source stopped
	failing error         // last transient failure; nil after any success
	polling bool
	fr      freshness // what the views prove about the reconciliation behind them (fresh.go)
	stalled bool      // the stream was caught stalling: poll while it is silent

	authSince time.Time
	cancel    context.CancelFunc
	done      chan struct{}
}

// view is one observation. app is nil when the application is gone.
type view struct {
	app   *argocd.Application
	rv    int64  // resourceVersion when numeric, else 0
	seq   uint64 // publication order
	fresh bool   // its health is proven to come from a reconciliation begun after our operation finished
}

func (v view) gone() bool { return v.app == nil }

// errWaitDeadline says a wait reached its context deadline; the caller turns
// it into a timeout or, when the API was failing, a transient exit.
var errWaitDeadline = errors.New("deadline passed")

// watchApp starts following the application until close.
func (r *runner) watchApp(ctx context.Context, name string) *appSource {
	ctx, cancel := context.WithCancel(ctx)
	s := &appSource{r: r, name: name, changed: make(chan struct{}), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.run(ctx)
	}()
	return s
}

func (s *appSource) close() {
	s.cancel()
	<-s.done
}

// offer publishes an application the caller fetched itself.
func (s *appSource) offer(app *argocd.Application) { s.publish(app) }

func (s *appSource) publish(app *argocd.Application) {
	v := view{app: app}
	if app != nil {
		v.rv = rvOf(app)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v.rv > 0 && v.rv < s.maxRV {
		return
	}
	s.maxRV = max(s.maxRV, v.rv)
	if app != nil {
		s.fr.observe(app)
	}
	s.latest = v
	s.notifyLocked()
}

// notifyLocked makes the newest view a new observation for wait.
func (s *appSource) notifyLocked() {
	s.seq++
	s.latest.seq = s.seq
	close(s.changed)
	s.changed = make(chan struct{})
}

// current is the newest view.
func (s *appSource) current() view {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.currentLocked()
}

func (s *appSource) currentLocked() view {
	v := s.latest
	v.fresh = v.app != nil && s.fr.fresh()
	return v
}

// armFreshness starts the proof of freshness from app, the view in which
// our operation was seen finished (fresh.go).
func (s *appSource) armFreshness(app *argocd.Application) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fr.arm(app)
	if s.latest.app != nil {
		s.fr.observe(s.latest.app)
	}
	s.notifyLocked()
}

// refreshTicket is what a refresh needs to be credited when it is answered.
type refreshTicket struct {
	epoch, level int
	rv           int64
}

func (s *appSource) ticket() refreshTicket {
	s.mu.Lock()
	defer s.mu.Unlock()
	return refreshTicket{epoch: s.fr.epoch, level: s.fr.level, rv: s.maxRV}
}

// answer publishes the answer to a refresh sent with ticket t and reports
// whether it was newer than everything seen when it was sent (F2 in fresh.go).
func (s *appSource) answer(app *argocd.Application, t refreshTicket) bool {
	s.publish(app)
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := s.fr.credit(app, t.epoch, t.level, t.rv)
	if ok {
		s.notifyLocked()
	}
	return ok
}

// wait calls cond with the newest view, now and after every change, until
// cond says done or fails, ctx ends (errWaitDeadline, or the interrupt
// error), or the source fails for good.
func (s *appSource) wait(ctx context.Context, cond func(view) (bool, error)) error {
	var seen uint64
	for {
		s.mu.Lock()
		v, changed, fatal := s.currentLocked(), s.changed, s.fatal
		s.mu.Unlock()
		if fatal != nil {
			return fatal
		}
		if v.seq != seen && v.seq > 0 {
			seen = v.seq
			if done, err := cond(v); done || err != nil {
				return err
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return interrupted()
			}
			return errWaitDeadline
		}
	}
}

// deadlineError turns a wait's deadline into the exit: 75 when the API was
// failing at that moment (nothing was judged, Argo may retry), else 4.
func (s *appSource) deadlineError(format string, args ...any) error {
	s.mu.Lock()
	failing := s.failing
	s.mu.Unlock()
	if failing != nil {
		return fail(exitcode.Transient, "%s; the Argo CD API was failing when the deadline passed: %v", fmt.Sprintf(format, args...), failing)
	}
	return fail(exitcode.Timeout, format, args...)
}

// failingNow reports whether the last exchange with the API failed.
func (s *appSource) failingNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failing != nil
}

func (s *appSource) setFailing(err error) {
	s.mu.Lock()
	s.failing = err
	s.mu.Unlock()
}

func (s *appSource) setFatal(err error) {
	s.mu.Lock()
	s.fatal = err
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// ok records a successful exchange with the API.
func (s *appSource) ok() {
	s.mu.Lock()
	s.failing = nil
	s.authSince = time.Time{}
	s.mu.Unlock()
}

// fault classifies a failed request; it returns false when the source must
// stop (permanent error, or credentials rejected for longer than authGrace).
// The watch and the health refresher both report here.
func (s *appSource) fault(err error) bool {
	switch {
	case argocd.IsAuth(err):
		s.mu.Lock()
		if s.authSince.IsZero() {
			s.authSince = time.Now()
		}
		since := s.authSince
		s.mu.Unlock()
		if time.Since(since) >= s.r.t.authGrace {
			s.setFatal(fail(exitcode.Transient, "Argo CD kept rejecting the token for %s: %v", s.r.t.authGrace, err))
			return false
		}
		_ = s.r.c.ReloadToken()
	case argocd.IsTransient(err):
	default:
		s.setFatal(err)
		return false
	}
	s.setFailing(err)
	return true
}

func (s *appSource) run(ctx context.Context) {
	backoff := s.r.t.backoffInitial
	for ctx.Err() == nil {
		if s.polling {
			s.poll(ctx)
			return
		}
		st, err := s.r.c.Watch(ctx, s.name)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if argocd.IsUnsupported(err) {
				s.r.log("watch stream unavailable (%v); polling every %s", err, s.r.t.pollInterval)
				s.polling = true
				continue
			}
			if !s.fault(err) {
				return
			}
			s.r.log("watch stream: %v; reconnecting in %s", err, backoff.Round(time.Millisecond))
			// Argo CD sends a stream's headers with its first event, and an
			// app that is gone has none: such a stream never opens. Ask once,
			// so the app's state (gone, above all) is not hidden behind it.
			if !s.getOnce(ctx) {
				return
			}
			if sleep(ctx, jitter(backoff)) != nil {
				return
			}
			backoff = min(2*backoff, s.r.t.backoffMax)
			continue
		}
		s.ok()
		opened := time.Now()
		err = s.consume(ctx, st)
		st.Close()
		if ctx.Err() != nil {
			return
		}
		if time.Since(opened) > s.r.t.backoffMax {
			backoff = s.r.t.backoffInitial // it had been working: this is a fresh fault
		}
		s.r.log("watch stream ended (%v); reconnecting", err)
		if sleep(ctx, jitter(backoff)) != nil {
			return
		}
		backoff = min(2*backoff, s.r.t.backoffMax)
	}
}

type streamMsg struct {
	ev  *argocd.WatchEvent
	err error
}

var errStalled = errors.New("stream stalled: the application changed without an event")

// consume publishes stream events until the stream ends or stalls.
func (s *appSource) consume(ctx context.Context, st *argocd.Stream) error {
	msgs := make(chan streamMsg)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			ev, err := st.Next()
			select {
			case msgs <- streamMsg{ev, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	// Argo CD sends an existing app at once; silence right after connecting
	// means the app is absent (or the stream is dead): ask after a poll
	// period rather than a whole stallCheck.
	quiet := time.NewTimer(min(s.r.t.pollInterval, s.r.t.stallCheck))
	defer quiet.Stop()
	lastRV := ""
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m := <-msgs:
			if m.err != nil {
				return m.err
			}
			s.ok()
			if m.ev.Type == argocd.EventDeleted {
				s.publish(nil)
			} else {
				app := m.ev.Application
				lastRV = app.Metadata.ResourceVersion
				s.publish(&app)
			}
			quiet.Reset(s.quietLimit())
		case <-quiet.C:
			app, err := s.r.c.Get(ctx, s.name)
			switch {
			case err == nil:
				s.ok()
				s.publish(app)
				if app.Metadata.ResourceVersion != lastRV {
					s.markStalled()
					return errStalled
				}
			case argocd.IsNotFound(err):
				s.ok()
				s.publish(nil)
				if lastRV != "" {
					s.markStalled()
					return errStalled
				}
			case ctx.Err() != nil:
				return ctx.Err()
			default:
				if !s.fault(err) {
					return err
				}
			}
			quiet.Reset(s.quietLimit())
		}
	}
}

// quietLimit is how long the stream may stay silent before the source asks
// with a GET: stallCheck, or a poll period once the stream was caught
// stalling (on that path it cannot be trusted to report a change).
func (s *appSource) quietLimit() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stalled {
		return min(s.r.t.pollInterval, s.r.t.stallCheck)
	}
	return s.r.t.stallCheck
}

func (s *appSource) markStalled() {
	s.mu.Lock()
	s.stalled = true
	s.mu.Unlock()
}

// getOnce fetches and publishes the app; false means the source must stop.
func (s *appSource) getOnce(ctx context.Context) bool {
	app, err := s.r.c.Get(ctx, s.name)
	switch {
	case err == nil:
		s.ok()
		s.publish(app)
	case argocd.IsNotFound(err):
		s.ok()
		s.publish(nil)
	case ctx.Err() != nil:
		return false
	default:
		return s.fault(err)
	}
	return true
}

func (s *appSource) poll(ctx context.Context) {
	for s.getOnce(ctx) {
		if sleep(ctx, s.r.t.pollInterval) != nil {
			return
		}
	}
}

// rvOf is the numeric resourceVersion, 0 if it is not a number.
func rvOf(app *argocd.Application) int64 {
	rv, _ := strconv.ParseInt(app.Metadata.ResourceVersion, 10, 64)
	return rv
}
