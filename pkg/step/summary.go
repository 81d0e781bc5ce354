package step

import (
	"fmt"
	"strings"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/aggregate"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

// summary is the step's one line on stdout, from its result.
func summary(res result) string {
	switch r := res.(type) {
	case *stepresult.SyncResult:
		return syncSummary(r)
	case *stepresult.ValidateResult:
		return validateSummary(r)
	case *stepresult.TeardownResult:
		return teardownSummary(r)
	case *stepresult.Header:
		return headerSummary(r)
	}
	panic(fmt.Sprintf("internal: no summary for %T", res))
}

func headerSummary(h *stepresult.Header) string {
	return fmt.Sprintf("%s: %s (exit %d): %s", h.Command, h.Outcome, h.ExitCode, h.Message)
}

func syncSummary(r *stepresult.SyncResult) string {
	if r.ExitCode != exitcode.OK {
		return fmt.Sprintf("sync-and-wait %s: %s (exit %d): %s", r.App, strings.ToUpper(r.Outcome), r.ExitCode, r.Message)
	}
	rev := r.SyncRevision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return fmt.Sprintf("sync-and-wait %s: %s at revision %s (sync %.1fs, healthy %.1fs after it, %d checks passed)",
		r.App, r.Health, rev, r.Timings.SyncSeconds, r.Timings.HealthSeconds, len(r.Checks))
}

func validateSummary(r *stepresult.ValidateResult) string {
	if len(r.Apps) == 0 {
		return headerSummary(&r.Header) // nothing was read: invalid arguments
	}
	counts := map[string]int{}
	for _, a := range r.Apps {
		counts[a.Verdict]++
	}
	var parts []string
	for _, v := range []string{aggregate.Healthy, aggregate.Progressing, aggregate.Degraded, aggregate.Failed} {
		if counts[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[v], v))
		}
	}
	s := fmt.Sprintf("validate: %s (%s)", r.Aggregate, strings.Join(parts, ", "))
	if r.ExitCode != exitcode.OK {
		s += fmt.Sprintf(" (exit %d): %s", r.ExitCode, r.Message)
	}
	return s
}

func teardownSummary(r *stepresult.TeardownResult) string {
	switch {
	case r.ExitCode != exitcode.OK:
		return fmt.Sprintf("teardown %s: %s (exit %d): %s", r.App, strings.ToUpper(r.Outcome), r.ExitCode, r.Message)
	case r.NothingToDo:
		return fmt.Sprintf("teardown %s: nothing to do, the application does not exist", r.App)
	}
	return fmt.Sprintf("teardown %s: deleted with its %d managed resources, no orphans (%d PVCs retained, %d deleted; %d CRDs retained, %d deleted)",
		r.App, len(r.Managed), len(r.RetainedPVCs), len(r.DeletedPVCs), len(r.RetainedCRDs), len(r.DeletedCRDs))
}
