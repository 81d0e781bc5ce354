package plugin

import (
	"context"
	"sync"
)

// Reads of a Workflow are shared by the lookups of one plugin process
// (issue 24). A whole DAG level starts at once in plugin mode (Argo counts
// no Plugin node against spec.parallelism), and each node's lookup read
// the whole Workflow itself: at 1,000 apps, 100 lookups each held the
// ~0.9 MB object, its ~6.5 MB of decompressed node JSON and the parsed
// nodes, and the 320 MiB sidecar was OOM-killed. Now:
//
//   - one read per workflow is in flight at a time; the lookups that begin
//     while it runs wait for the next one, which starts when it ends, and
//     all of them share it (one GET per round, not one per lookup);
//   - a lookup only takes a read that started after the lookup began: a
//     start (or a workflow retry's new one) persisted just before the
//     lookup is seen by it, never hidden by an older answer still in flight;
//   - one read at a time in the whole process (GET and decode: reads of
//     different workflows queue too), and what a read keeps is only what a
//     lookup needs: the Workflow's status.startedAt (identity.go);
//   - a read is not cached past its round: the next lookup reads again.

// wfKey names one Workflow; its uid is part of it, so a workflow replaced
// under the same name is another.
type wfKey struct{ namespace, name, uid string }

// wfStatus is what one read of a Workflow gives the lookups sharing it.
type wfStatus struct {
	startedAt string // status.startedAt: "" before the controller started the run
}

// wfReads shares the reads of Workflows between lookups.
type wfReads struct {
	ctx  context.Context // the server's: a read runs for every waiter, not for one
	wg   *sync.WaitGroup // the server's: Wait covers reads still running
	read func(ctx context.Context, key wfKey) (*wfStatus, error)
	one  chan struct{} // one read at a time in the process

	mu    sync.Mutex
	byKey map[wfKey]*wfQueue
}

// wfQueue is one workflow's reads: at most one running, and the next one,
// which every lookup beginning meanwhile joins.
type wfQueue struct {
	running bool
	next    *wfRound
}

// wfRound is one read and the lookups waiting for it.
type wfRound struct {
	done    chan struct{}
	waiters int // lookups that joined (tests)
	st      *wfStatus
	err     error
}

func newWFReads(ctx context.Context, wg *sync.WaitGroup, read func(context.Context, wfKey) (*wfStatus, error)) *wfReads {
	return &wfReads{ctx: ctx, wg: wg, read: read, one: make(chan struct{}, 1), byKey: map[wfKey]*wfQueue{}}
}

// get is a read of key that starts after get was called, shared with the
// other lookups waiting for the same read. Its error is the read's, with
// its class; a lookup that stops waiting gets ctx's error.
func (r *wfReads) get(ctx context.Context, key wfKey) (*wfStatus, error) {
	r.mu.Lock()
	q := r.byKey[key]
	if q == nil {
		q = &wfQueue{}
		r.byKey[key] = q
	}
	if q.next == nil {
		q.next = &wfRound{done: make(chan struct{})}
	}
	rd := q.next
	rd.waiters++
	if !q.running {
		r.start(key, q)
	}
	r.mu.Unlock()
	select {
	case <-rd.done:
		return rd.st, rd.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// start runs q's next round; r.mu is held.
func (r *wfReads) start(key wfKey, q *wfQueue) {
	rd := q.next
	q.next, q.running = nil, true
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		st, err := r.run(key)
		r.mu.Lock()
		defer r.mu.Unlock()
		rd.st, rd.err = st, err
		close(rd.done)
		if q.next != nil {
			r.start(key, q)
			return
		}
		q.running = false
		delete(r.byKey, key)
	}()
}

// run is one read, when no other read of the process runs.
func (r *wfReads) run(key wfKey) (*wfStatus, error) {
	select {
	case r.one <- struct{}{}:
	case <-r.ctx.Done():
		return r.read(r.ctx, key) // fails at once, with the read's own error
	}
	defer func() { <-r.one }()
	return r.read(r.ctx, key)
}

// pending is how many lookups wait for key's next read, not yet started
// (tests).
func (r *wfReads) pending(key wfKey) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if q := r.byKey[key]; q != nil && q.next != nil {
		return q.next.waiters
	}
	return 0
}
