package step

import (
	"context"

	"github.com/deployctl/deployctl/pkg/step/argocd"
)

// awaitLateSync is the wait before a sync request that timed out is sent
// again: for up to one more request timeout it reads the application,
// and returns the number of the request of ours whose operation appeared
// (0 when none did, and then the request is sent again). A request Argo CD
// processes within this wait is adopted, so it does not become a second
// operation after the one the re-sent request starts. The wait ends with
// ctx (the sync deadline) too; ctx's error is then returned.
func (r *runner) awaitLateSync(ctx context.Context, src *appSource, s *ourSync) (int, error) {
	wctx, cancel := context.WithTimeout(ctx, r.requestTimeout)
	defer cancel()
	r.log("the answer to sync request %d of %s did not come within %s; waiting up to %s for Argo CD to start its operation before asking again",
		s.requests, src.name, r.requestTimeout, r.requestTimeout)
	for {
		cur, err := r.c.Get(wctx, src.name)
		if err == nil {
			src.offer(cur)
			if n := s.seen(cur); n != 0 {
				return n, nil
			}
		} else if wctx.Err() == nil && !argocd.IsTransient(err) && !argocd.IsAuth(err) {
			return 0, err
		}
		if sleep(wctx, r.t.pollInterval) != nil {
			return 0, ctx.Err()
		}
	}
}
