package step

import (
	"context"
	"errors"

	"github.com/deployctl/deployctl/pkg/step/argocd"
)

// awaitLateSync is the wait before a sync request that timed out is sent
// again: for up to one more request timeout it reads the application,
// and returns the number of the request of ours whose operation appeared
// (0 when none did, and then the request is sent again). A request Argo CD
// processes within this wait is adopted, so it does not become a second
// operation after the one the re-sent request starts. The wait ends with
// ctx (the sync deadline) too; ctx's error is then returned. When the
// latest read failed, its error is returned: the request is never sent
// again on an older read, and the caller's retry waits again.
func (r *runner) awaitLateSync(ctx context.Context, src *appSource, s *ourSync) (int, error) {
	wctx, cancel := context.WithTimeout(ctx, r.requestTimeout)
	defer cancel()
	r.log("the answer to sync request %d of %s did not come within %s; waiting up to %s for Argo CD to start its operation before asking again",
		s.requests, src.name, r.requestTimeout, r.requestTimeout)
	// unread is why the application's latest state is not known: the
	// request is never sent again on an older read (the caller retries,
	// and waits again).
	var unread error = &argocd.NetError{Op: "get application " + src.name, Err: errors.New("no answer within the wait")}
	for {
		cur, err := r.c.Get(wctx, src.name)
		switch {
		case err == nil:
			unread = nil
			src.offer(cur)
			if n := s.seen(cur); n != 0 {
				return n, nil
			}
		case wctx.Err() != nil:
			// Cut short by the end of the wait: it says nothing.
		case !argocd.IsTransient(err) && !argocd.IsAuth(err):
			return 0, err
		default:
			unread = err
		}
		if sleep(wctx, r.t.pollInterval) != nil {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			return 0, unread
		}
	}
}
