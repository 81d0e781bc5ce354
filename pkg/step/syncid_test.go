package step

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

const nodeSyncID = "0123456789abcdef"

// A run given --sync-id that is stopped while its operation runs (the
// plugin restarted): the next run with the same id follows that operation,
// sends no sync request of its own, and succeeds only on fresh health.
func TestSyncIDAdoptsRunningOperation(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy, syncDuration: 400 * time.Millisecond})
	ctx, stop := context.WithCancel(context.Background())
	first := startStepEnv(t, ctx, f.addr, testTiming(), nil,
		"sync-and-wait", "--app", "web-app", "--sync-timeout", "1500ms", "--health-timeout", "1500ms", "--sync-id", nodeSyncID)
	f.waitFor("our operation running", func() bool { return !f.ourOpStart.IsZero() })
	stop()
	expect(t, first(), exitcode.Transient, "interrupted")
	o := syncAndWait(t, f, "--sync-id", nodeSyncID)
	expect(t, o, exitcode.OK)
	if len(f.syncRequests) != 1 || f.count("terminate") != 0 {
		t.Errorf("sync requests %d, calls %v: the second run must adopt the first one's operation", len(f.syncRequests), f.calls)
	}
	if !strings.Contains(strings.Join(anyStrings(o.result["messages"]), "|"), "adopted this node's operation") || o.str("syncID") != nodeSyncID {
		t.Errorf("messages %v, sync id %q", o.result["messages"], o.str("syncID"))
	}
}

// Our operation finished before the restart: adopted, not repeated; health
// is still judged fresh after it. Another id (a new node, or the same node
// after a workflow retry) syncs anew.
func TestSyncIDAdoptsFinishedOperation(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy})
	expect(t, syncAndWait(t, f, "--sync-id", nodeSyncID), exitcode.OK)
	expect(t, syncAndWait(t, f, "--sync-id", nodeSyncID), exitcode.OK)
	if len(f.syncRequests) != 1 {
		t.Fatalf("sync requests %d after two runs of one node, want 1", len(f.syncRequests))
	}
	expect(t, syncAndWait(t, f, "--sync-id", "fedcba9876543210"), exitcode.OK)
	if len(f.syncRequests) != 2 {
		t.Errorf("sync requests %d, want a new sync for a new id", len(f.syncRequests))
	}
}

// Without --sync-id every run syncs (the pod mode's behaviour, unchanged).
func TestNoSyncIDAlwaysSyncs(t *testing.T) {
	t.Parallel()
	f := newFakeArgo(t, scenario{exists: true, before: healthy})
	expect(t, syncAndWait(t, f), exitcode.OK)
	expect(t, syncAndWait(t, f), exitcode.OK)
	if len(f.syncRequests) != 2 {
		t.Errorf("sync requests %d, want 2", len(f.syncRequests))
	}
}
