package workflow

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/livestate"
)

// maxGetFailures is how many reads of the followed run in a row may fail
// (API hiccups) before following gives up.
const maxGetFailures = 10

// Watch is how Follow reports: the task names to report (apps and the
// handoff), where to print and whether that is a terminal (a live progress
// line), the run's start, how often to read the run, the loggers of the
// follow phase and of one node, whether logs are JSON (then every
// transition is logged at info), and what to count as a failed read.
type Watch struct {
	Show        []string
	Out         io.Writer
	TTY         bool
	Started     time.Time
	Poll        time.Duration
	Log         *slog.Logger
	NodeLog     func(node string) *slog.Logger
	JSONLog     bool
	OnReadError func()
	// Halt, if set, is asked about every state read: an error ends the
	// follow at once with that error (the run is not waited for).
	Halt func(*wfv1.Workflow) error
}

// follower prints a run's node transitions: one plain line per change of
// an app's node, and on a terminal a live progress line under them.
type follower struct {
	wt       Watch
	show     map[string]bool // the task names to report: apps and the handoff
	phase    map[string]wfv1.NodePhase
	tries    map[string]int
	out      io.Writer
	tty      bool
	first    bool
	lastLine string
}

// Follow watches a run until it completes (or ctx ends), printing every
// app node's transitions. It returns the last state read.
func Follow(ctx context.Context, cl *kube.Clients, w *wfv1.Workflow, wt Watch) (*wfv1.Workflow, error) {
	f := &follower{wt: wt, show: map[string]bool{}, phase: map[string]wfv1.NodePhase{}, tries: map[string]int{},
		out: wt.Out, tty: wt.TTY, first: true}
	for _, s := range wt.Show {
		f.show[s] = true
	}
	lg := wt.Log
	lg.Info("following", "workflow", w.Name, "namespace", w.Namespace)
	wfs := cl.Workflows.ArgoprojV1alpha1().Workflows(w.Namespace)
	failures := 0
	defer f.clearLine()
	if err := livestate.Hydrate(w); err != nil {
		return w, err
	}
	for {
		f.observe(w)
		if wt.Halt != nil {
			if err := wt.Halt(w); err != nil {
				return w, err
			}
		}
		if w.Status.Phase.Completed() {
			lg.Info("workflow finished", "workflow", w.Name, "workflow_phase", string(w.Status.Phase), "message", w.Status.Message)
			return w, nil
		}
		select {
		case <-ctx.Done():
			return w, ctx.Err()
		case <-time.After(wt.Poll):
		}
		got, err := wfs.Get(ctx, w.Name, metav1.GetOptions{})
		switch {
		case err == nil:
			if err := livestate.Hydrate(got); err != nil {
				return w, err
			}
			w, failures = got, 0
		case ctx.Err() != nil:
			return w, ctx.Err()
		case apierrors.IsNotFound(err):
			return w, fmt.Errorf("workflow %s/%s was deleted while it was followed", w.Namespace, w.Name)
		default:
			failures++
			wt.OnReadError()
			lg.Warn("reading the workflow failed", "workflow", w.Name, "error", err.Error(), "failures", failures)
			if failures >= maxGetFailures {
				return w, fmt.Errorf("reading workflow %s failed %d times in a row: %w", w.Name, failures, err)
			}
		}
	}
}

// observe reports what changed since the last read.
func (f *follower) observe(w *wfv1.Workflow) {
	nodes := livestate.TaskNodes(w)
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		if f.show[n] {
			names = append(names, n)
		}
	}
	// Report in the order things happened.
	sort.Slice(names, func(i, j int) bool {
		a, b := nodes[names[i]], nodes[names[j]]
		if !a.StartedAt.Equal(&b.StartedAt) {
			return a.StartedAt.Before(&b.StartedAt)
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		n := nodes[name]
		tries := len(livestate.Attempts(w, n))
		if n.Type != wfv1.NodeTypeRetry {
			tries = 0
		}
		prev, seen := f.phase[name]
		if seen && prev == n.Phase && f.tries[name] == tries {
			continue
		}
		f.phase[name], f.tries[name] = n.Phase, tries
		f.transition(w, name, n, prev, tries, f.first && n.Fulfilled())
	}
	f.first = false
	f.progress(w, nodes)
}

func (f *follower) transition(w *wfv1.Workflow, name string, n *wfv1.NodeStatus, prev wfv1.NodePhase, tries int, earlier bool) {
	var detail []string
	if tries > 1 && !n.Fulfilled() {
		detail = append(detail, fmt.Sprintf("attempt %d", tries))
	}
	if n.Fulfilled() && !n.StartedAt.IsZero() {
		detail = append(detail, fmt.Sprintf("%.1fs", NodeSeconds(n)))
	}
	if earlier {
		detail = append(detail, "before this executor run")
	}
	msg := ""
	if n.FailedOrError() {
		msg = n.Message
		if res := livestate.ResultOf(w, n); res != nil && res.Message != "" {
			msg = res.Message
		}
	}
	if n.Phase == wfv1.NodeOmitted || n.Phase == wfv1.NodeSkipped {
		msg = "not run: a node it depends on did not succeed"
	}
	line := fmt.Sprintf("%s  %-28s %-10s", time.Now().Format("15:04:05"), name, n.Phase)
	if len(detail) > 0 {
		line += " (" + strings.Join(detail, ", ") + ")"
	}
	if msg != "" {
		line += ": " + msg
	}
	f.clearLine()
	fmt.Fprintln(f.out, strings.TrimRight(line, " "))
	// The line above is for people; the record is for machines: at info in
	// JSON logs, at debug in text logs (where it would repeat the line).
	lg := f.wt.NodeLog(name)
	lv := lg.Debug
	if f.wt.JSONLog {
		lv = lg.Info
	}
	if n.FailedOrError() {
		lv = lg.Error
	}
	lv("node "+string(n.Phase), "workflow", w.Name, "node_phase", string(n.Phase), "previous", string(prev),
		"attempts", tries, "seconds", NodeSeconds(n), "message", msg)
}

// progress draws the live line (terminal only).
func (f *follower) progress(w *wfv1.Workflow, nodes map[string]*wfv1.NodeStatus) {
	if !f.tty {
		return
	}
	count := map[wfv1.NodePhase]int{}
	for name, n := range nodes {
		if f.show[name] {
			count[n.Phase]++
		}
	}
	done := count[wfv1.NodeSucceeded]
	failed := count[wfv1.NodeFailed] + count[wfv1.NodeError]
	notRun := count[wfv1.NodeOmitted] + count[wfv1.NodeSkipped]
	waiting := len(f.show) - done - failed - notRun - count[wfv1.NodeRunning] - count[wfv1.NodePending]
	el := time.Since(f.wt.Started).Round(time.Second)
	f.lastLine = fmt.Sprintf("%s %s: %d/%d succeeded · %d running · %d failed · %d not run · %d waiting · %s",
		w.Name, PhaseOf(w), done, len(f.show), count[wfv1.NodeRunning]+count[wfv1.NodePending], failed, notRun, max(waiting, 0), el)
	fmt.Fprint(f.out, "\r\x1b[K"+f.lastLine)
}

func (f *follower) clearLine() {
	if f.tty && f.lastLine != "" {
		fmt.Fprint(f.out, "\r\x1b[K")
		f.lastLine = ""
	}
}

// NodeSeconds is a node's run time so far, or in total when finished.
func NodeSeconds(n *wfv1.NodeStatus) float64 {
	if n.StartedAt.IsZero() {
		return 0
	}
	if n.FinishedAt.IsZero() {
		return sinceSeconds(n.StartedAt.Time)
	}
	return n.FinishedAt.Sub(n.StartedAt.Time).Round(100 * 1e6).Seconds()
}

// sinceSeconds is a duration in seconds, rounded to milliseconds.
func sinceSeconds(t time.Time) float64 {
	return float64(time.Since(t).Round(time.Millisecond)) / float64(time.Second)
}
