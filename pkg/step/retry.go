package step

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/deployctl/deployctl/internal/redact"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/argocd"
)

// timing holds the waits and intervals; tests shorten them.
type timing struct {
	pollInterval    time.Duration // polling when the watch stream is unavailable
	stallCheck      time.Duration // a GET after this long without stream events
	backoffInitial  time.Duration // first retry delay of a transient fault
	backoffMax      time.Duration
	authGrace       time.Duration // how long 401/403 are retried
	terminateGrace  time.Duration // how long a terminated operation may take to stop (within the node's deadline)
	checkInterval   time.Duration // between attempts of an extra check
	refreshRetry    time.Duration // before asking again for a refresh whose answer proved nothing
	confirmDelay    time.Duration // a failing health is confirmed by a hard refresh this much later
	startNudge      time.Duration // an operation not started after this long gets a refresh
	progressRefresh time.Duration // a refresh this often while waiting for Healthy
	validateBudget  time.Duration // validate has no timeout flag: its retry budget
}

func defaultTiming() timing {
	return timing{
		pollInterval:    time.Second,
		stallCheck:      15 * time.Second,
		backoffInitial:  250 * time.Millisecond,
		backoffMax:      5 * time.Second,
		authGrace:       time.Minute,
		terminateGrace:  time.Minute,
		checkInterval:   time.Second,
		refreshRetry:    time.Second,
		confirmDelay:    5 * time.Second,
		startNudge:      10 * time.Second,
		progressRefresh: 15 * time.Second,
		validateBudget:  2 * time.Minute,
	}
}

// forNode ties the waits that decide how soon a failure is seen to the
// node's health timeout, so that noticing a Degraded on a silent stream and
// confirming it fit well inside it: a tenth of it for the stall check, a
// twentieth for the confirmation delay, a quarter for the periodic refresh,
// never more than the defaults.
func (t timing) forNode(health time.Duration) timing {
	t.stallCheck = min(t.stallCheck, max(health/10, t.pollInterval))
	t.confirmDelay = min(t.confirmDelay, health/20)
	t.progressRefresh = min(t.progressRefresh, max(health/4, t.pollInterval))
	return t
}

// runner carries what every command needs.
type runner struct {
	c              *argocd.Client
	t              timing
	requestTimeout time.Duration // also bounds each HTTP check
	log            func(format string, args ...any)
}

// call runs one API request until it succeeds or fails for good. Transient
// faults are retried with exponential backoff (with jitter, so the pods of a
// wide DAG do not retry in step) while ctx lasts; auth rejections for at most
// authGrace, re-reading the token file each time. When ctx ends during
// retries the step exits 75: Argo retries the whole step later.
// A permanent error is returned as is, so callers can test IsNotFound.
func (r *runner) call(ctx context.Context, what string, fn func(context.Context) error) error {
	delay := r.t.backoffInitial
	var authSince time.Time
	var fault error // the last fault the server gave, not the deadline that cut a request short
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			if fault == nil {
				fault = err
			}
			return gaveUp(ctx, what, fault)
		}
		fault = err
		switch {
		case argocd.IsAuth(err):
			if authSince.IsZero() {
				authSince = time.Now()
			}
			if time.Since(authSince) >= r.t.authGrace {
				return fail(exitcode.Transient, "%s: Argo CD kept rejecting the token for %s (not yet valid, or RBAC not yet applied?): %v",
					what, r.t.authGrace, err)
			}
			if rerr := r.c.ReloadToken(); rerr != nil {
				r.log("%s: re-reading the token: %v", what, rerr)
			}
		case argocd.IsTransient(err):
		default:
			return err
		}
		if attempt == 1 || attempt%5 == 0 {
			r.log("%s: %v (attempt %d; retrying)", what, err, attempt)
		}
		if sleep(ctx, jitter(delay)) != nil {
			return gaveUp(ctx, what, fault)
		}
		delay = min(2*delay, r.t.backoffMax)
	}
}

// gaveUp is the error after ctx ended in the middle of retrying.
func gaveUp(ctx context.Context, what string, last error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return interrupted()
	}
	return fail(exitcode.Transient, "%s: still failing when the deadline passed: %v", what, last)
}

func interrupted() error {
	return fail(exitcode.Transient, "interrupted by a signal; every step is idempotent, so it is safe to run again")
}

func jitter(d time.Duration) time.Duration {
	return d - d/5 + rand.N(d/5*2+1)
}

// sleep waits d or until ctx ends (then it returns ctx.Err()).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newLogger writes progress lines to w (stderr): stdout carries only the
// one-line summary. The watch goroutine logs too, hence the lock. Every line
// passes redact.String: API errors quote what servers and proxies answered.
func newLogger(w io.Writer) func(string, ...any) {
	var mu sync.Mutex
	return func(format string, args ...any) {
		line := fmt.Sprintf("%s deploystep: %s\n", time.Now().UTC().Format("15:04:05.000"), redact.String(fmt.Sprintf(format, args...)))
		mu.Lock()
		defer mu.Unlock()
		io.WriteString(w, line)
	}
}
