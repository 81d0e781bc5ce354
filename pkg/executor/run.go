// Package executor is the containerized entry point of RFC 7 (docs/requirements.md#rfc-226-and-7-the-executor):
// `deployctl deploy | validate | teardown | preflight`. It reads its
// configuration from the environment and mounted files (flags for people at
// a terminal), checks the cluster read-only (Phase 0), applies the
// orchestration templates, submits or resumes the platform's workflow,
// follows it, validates, and ends with a status report, Prometheus metrics
// and the exit code of the contract: 0 success, 1 failure, 2 partial,
// 3 invalid configuration, 4 timeout.
//
// Reading order, as sigs.k8s.io/kind's create actions: run.go (Run: the
// configuration, then the action) and actions.go (each action as its
// phases, in order); the phases are packages of their own under internal/:
//
//	options.go, config.go, environment.go, overrides.go  settings → Config
//	internal/preflight  Phase 0: read-only checks, the cluster inventory
//	objects.go          what to apply; internal/apply applies it
//	internal/workflow   decide, submit or resume (Argo's retry), follow
//	health.go, components.go  Argo CD's verdict and the report's components
//	internal/metrics    Prometheus text and /metrics; package report: the report
package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/internal/atomicfile"
	"github.com/deployctl/deployctl/internal/duration"
	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/executor/internal/apply"
	"github.com/deployctl/deployctl/pkg/executor/internal/metrics"
	"github.com/deployctl/deployctl/pkg/executor/internal/workflow"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/report"
	"github.com/deployctl/deployctl/pkg/spec"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// run is one action being executed.
type run struct {
	cfg      *Config
	cl       *kube.Clients
	log      *Log
	out      io.Writer // the human output: transitions, summary
	tty      bool
	report   *report.Report
	metrics  *metrics.Metrics
	compiled *compile.Output
	objects  []apply.Object
	started  time.Time
	poll     time.Duration // how often a followed workflow is read
}

// Run executes an action with the process environment.
func Run(ctx context.Context, o *Options, stdout, stderr io.Writer) error {
	return execute(ctx, o, os.LookupEnv, stdout, stderr)
}

// execute is Run with the environment injected (tests).
func execute(ctx context.Context, o *Options, getenv func(string) (string, bool), stdout, stderr io.Writer) error {
	started := time.Now()
	cfg, cfgErr := o.Load(getenv)
	// The output sinks mask every credential the configuration holds (and
	// any bearer, basic or URL credential) whatever path a text took to
	// them: the log handler, stdout, the report and metrics (end), and the
	// error main prints (end).
	r := &run{
		cfg:     cfg,
		log:     NewLog(stderr, string(o.Action), cfg.LogLevel, cfg.LogFormat, cfg.TraceID, cfg.SpanID, cfg.redact),
		out:     cfg.redact.Writer(stdout),
		tty:     isTerminal(stdout),
		report:  newReport(cfg, o.Action),
		started: started,
		poll:    2 * time.Second,
	}
	r.metrics = metrics.New(string(o.Action), r.report.Platform, cfg.Environment, errorPhases, cfg.redact)
	if cfgErr != nil {
		var inv *Invalid
		if errors.As(cfgErr, &inv) {
			r.report.Configuration.Problems = inv.Problems
			for _, p := range inv.Problems {
				r.log.Phase(PhaseConfig).Error("invalid configuration", "problem", p)
			}
		}
		r.metrics.Error(PhaseConfig)
		r.report.Recommend("fix the configuration problems listed, then run %s again: nothing was done", o.Action)
		return r.end(exitcode.Invalid, fmt.Sprintf("invalid configuration (%d problems): nothing was done, the cluster was not contacted", len(r.report.Configuration.Problems)), cfgErr)
	}
	lg := r.log.Phase(PhaseConfig)
	lg.Info("configuration loaded", "platform", cfg.Platform(), "environment", cfg.Environment, "scope", cfg.Scope,
		"dry_run", cfg.DryRun, "kubeconfig", cfg.KubeconfigSource, "context", cfg.Context)
	for _, n := range cfg.Overrides {
		lg.Info("environment override", "override", n)
	}

	r.report.Phase(PhaseCompile)
	out, err := compile.Compile(cfg.DAG, cfg.Scope)
	if err == nil {
		r.compiled = out
		r.objects, err = objectsToApply(cfg, out)
	}
	r.report.EndPhase(PhaseCompile)
	if err != nil {
		r.metrics.Error(PhaseCompile)
		return r.end(exitcode.Invalid, "the spec does not compile: "+err.Error(), err)
	}
	r.report.SpecHash = out.SpecHash
	timeout := cfg.Timeout
	if timeout == 0 {
		if timeout, err = defaultTimeout(o.Action, out); err != nil {
			return r.end(exitcode.Invalid, "the run's default deadline: "+err.Error()+": give --timeout", err)
		}
	}
	r.report.Timeout = timeout.String()
	r.log.Phase(PhaseCompile).Info("compiled", "spec_hash", out.SpecHash, "apps", len(out.Deploy.Apps()),
		"teardown_apps", len(out.Teardown.Apps()), "objects", len(r.objects), "timeout", timeout.String())

	rc, err := cfg.restConfig(o.Action)
	if err == nil {
		rc.WarningHandler = apiWarnings{r.log.base.With("component", componentExecutor)}
		r.cl, err = kube.NewClients(rc)
	}
	if err != nil {
		r.metrics.Error(PhaseConfig)
		return r.end(exitcode.Invalid, "cannot build API clients from the kubeconfig: "+err.Error(), err)
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.MetricsAddr != "" {
		sctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		addr, _, err := r.metrics.Serve(sctx, cfg.MetricsAddr)
		if err != nil {
			return r.end(exitcode.Invalid, "cannot serve metrics: "+err.Error(), err)
		}
		r.log.Phase(PhaseConfig).Info("serving metrics", "address", "http://"+addr.String()+"/metrics")
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var code int
	var summary string
	switch o.Action {
	case ActionPreflight:
		code, summary, err = r.preflightOnly(actx)
	case ActionDeploy:
		code, summary, err = r.deploy(actx)
	case ActionValidate:
		code, summary, err = r.validate(actx)
	case ActionTeardown:
		code, summary, err = r.teardown(actx)
	}
	switch {
	case errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		r.metrics.Error(PhaseFollow)
		summary = fmt.Sprintf("%s did not finish within its deadline of %s", o.Action, timeout)
		if w := r.report.Workflow; w != nil && w.Name != "" {
			r.report.Recommend("the workflow %s/%s keeps running in the cluster: run %s again to follow it (it is not started twice), or raise --timeout / TIMEOUT", w.Namespace, w.Name, o.Action)
		} else {
			r.report.Recommend("raise --timeout / TIMEOUT (now %s), and check why the cluster answers slowly", timeout)
		}
		return r.end(exitcode.Timeout, summary, errors.New(summary))
	case ctx.Err() != nil:
		summary = fmt.Sprintf("%s interrupted", o.Action)
		if w := r.report.Workflow; w != nil && w.Name != "" {
			r.report.Recommend("the workflow %s/%s keeps running in the cluster: run %s again to follow it", w.Namespace, w.Name, o.Action)
		}
		r.report.Status = report.StatusInterrupted
		return r.end(exitcode.Failure, summary, errors.New(summary))
	}
	return r.end(code, summary, err)
}

// end finishes the report and the metrics, writes both, prints the human
// summary and returns the error carrying the exit code.
func (r *run) end(code int, summary string, err error) error {
	status := report.StatusOf(code)
	if r.report.Status == report.StatusInterrupted {
		status = report.StatusInterrupted
	}
	if code == exitcode.OK && r.report.Workflow != nil && r.report.Workflow.Decision == workflow.DecideSkip {
		status = report.StatusUpToDate
	}
	r.metrics.Finish(status)
	r.report.Finish(code, status, summary, r.metrics.Errors())
	r.cfg.redact.Walk(r.report)
	lg := r.log.Phase(PhaseReport)
	if werr := r.report.WriteJSON(r.cfg.ReportFile); werr != nil {
		lg.Error("cannot write the report", "file", r.cfg.ReportFile, "error", werr.Error())
	}
	if werr := writeFileAtomic(r.cfg.MetricsFile, r.metrics.Render(), "# HELP executor_action_duration_seconds "); werr != nil {
		lg.Error("cannot write the metrics", "file", r.cfg.MetricsFile, "error", werr.Error())
	}
	r.report.WriteText(r.out)
	fmt.Fprintf(r.out, "  report: %s  metrics: %s\n", r.cfg.ReportFile, r.cfg.MetricsFile)
	lvl := lg.Info
	if code != exitcode.OK {
		lvl = lg.Error
	}
	lvl("finished", "status", status, "exit_code", code, "summary", summary, "seconds", r.report.DurationSeconds)
	if code == exitcode.OK {
		return nil
	}
	if err == nil {
		err = errors.New(summary)
	}
	var inv *Invalid
	if errors.As(err, &inv) {
		// The list is in the summary above; main prints one line.
		err = fmt.Errorf("invalid configuration: %d problem(s), listed above", len(inv.Problems))
	}
	return exitcode.With(code, r.cfg.redact.Error(err))
}

// Deadline slack: pods scheduling, image pulls and controller latency on
// top of the steps' own worst case.
const (
	timeoutSlack    = 10 * time.Minute
	validateTimeout = 5 * time.Minute
)

// defaultTimeout is the action's deadline when none is given: the plan's
// worst-case makespan, where an app weighs its one-attempt hard limit (sync
// + health timeouts + the step's slack), along the critical path, plus the
// GitOps handoff node, plus slack. Retries of transient failures are not
// counted: a deploy that needs them may hit the deadline, and deploy again
// follows the same run.
func defaultTimeout(action Action, out *compile.Output) (time.Duration, error) {
	if action == ActionValidate || action == ActionPreflight {
		return validateTimeout, nil
	}
	d := out.Deploy
	if action == ActionTeardown {
		d = out.Teardown
	}
	// Each app's limit, and then all of them: the critical path is a part
	// of that sum, so if the sum does not overflow, neither does the path.
	limits := map[string]time.Duration{}
	var all time.Duration
	for _, id := range d.Graph.Nodes() {
		n := d.Node(id)
		if n == nil || n.Kind != dag.App || n.App.Timeouts == nil {
			continue
		}
		limit, err := stepcontract.AttemptDeadline(n.App.Timeouts.Sync.Duration, n.App.Timeouts.Health.Duration)
		if err == nil {
			all, err = duration.Sum(all, limit)
		}
		if err != nil {
			return 0, fmt.Errorf("app %s: %w", id, err)
		}
		limits[id] = limit
	}
	_, makespan, err := d.Graph.CriticalPath(func(id string) time.Duration { return limits[id] })
	if err != nil {
		makespan = time.Hour
	}
	terms := []time.Duration{makespan, timeoutSlack}
	if out.Root != nil {
		// the handoff node runs with the built-in timeouts
		handoff, err := stepcontract.AttemptDeadline(spec.DefaultTimeouts.Sync.Duration, spec.DefaultTimeouts.Health.Duration)
		if err != nil {
			return 0, err
		}
		terms = append(terms, handoff)
	}
	return duration.Sum(terms...)
}

// writeFileAtomic creates path's folder if needed, then writes atomically;
// it replaces only a file that starts with mark (one it wrote).
func writeFileAtomic(path string, data []byte, mark string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, mark)
}

// isTerminal says whether w is a character device (an interactive terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// follow watches a run to its end (workflow.Follow), reporting the shown
// tasks' transitions on the executor's output and log.
func (r *run) follow(ctx context.Context, w *wfv1.Workflow, show []string) (*wfv1.Workflow, error) {
	var halt func(*wfv1.Workflow) error
	if r.cfg.DAG.Platform.Spec.Workflow.StepMode.Plugin() {
		halt = func(w *wfv1.Workflow) error {
			if pm := workflow.FindPluginMissing(w); pm != nil {
				return pm
			}
			return nil
		}
	}
	return workflow.Follow(ctx, r.cl, w, workflow.Watch{
		Halt: halt,
		Show: show, Out: r.out, TTY: r.tty, Started: r.started, Poll: r.poll,
		Log:         r.log.Phase(PhaseFollow),
		NodeLog:     func(node string) *slog.Logger { return r.log.For(PhaseFollow, node) },
		JSONLog:     r.cfg.LogFormat == "json",
		OnReadError: func() { r.metrics.Error(PhaseFollow) },
	})
}
