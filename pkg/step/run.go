package step

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/argocd"
	"github.com/deployctl/deployctl/pkg/step/cmdline"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

// Main runs deploystep with the process's arguments and environment and
// returns the exit code.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, args, os.LookupEnv, os.Stdout, os.Stderr, defaultTiming())
}

// result is what every command's result type provides.
type result interface {
	Finish(code int, err error, calls int64)
}

// run is the pod: it runs the invocation, writes the result file and the
// termination message, and prints one line to stdout; progress goes to
// stderr.
func run(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer, t timing) int {
	log := newLogger(stderr)
	x := execute(ctx, args, env, log, t)
	res, code, err := x.res, x.code, x.err
	if errors.Is(err, cmdline.ErrHelp) {
		fmt.Fprint(stdout, cmdline.Usage)
		return exitcode.OK
	}
	if code == exitcode.Invalid {
		fmt.Fprintf(stderr, "deploystep: %v\n\n%s", err, cmdline.Usage)
	}
	if werr := writeResult(x.inv.Global.ResultFile, res); werr != nil {
		log("%v", werr)
		if code == exitcode.OK {
			// The workflow reads this file; succeeding without it would
			// hide the outcome.
			code = exitcode.Failure
			res.Finish(code, werr, x.calls)
		}
	}
	line := summary(res)
	writeTerminationMessage(env, line)
	fmt.Fprintln(stdout, line)
	return code
}

// Outcome is one finished invocation, as the plugin server reports it.
type Outcome struct {
	Code    int    // the exit code the pod would end with
	Summary string // the pod's one line on stdout: the failure reason when it failed
	Result  []byte // the result JSON, byte for byte what the pod writes to RESULT_FILE
}

// Exec runs one invocation, the same code path as the pod, with the
// environment read through env and progress lines written to log; the
// result stays in memory (RESULT_FILE is parsed but never written). The
// plugin server (package plugin) runs each node with it.
func Exec(ctx context.Context, args []string, env func(string) (string, bool), log io.Writer) Outcome {
	return execOutcome(ctx, args, env, log, defaultTiming())
}

func execOutcome(ctx context.Context, args []string, env func(string) (string, bool), log io.Writer, t timing) Outcome {
	x := execute(ctx, args, env, newLogger(log), t)
	res, code := x.res, x.code
	if errors.Is(x.err, cmdline.ErrHelp) {
		code = exitcode.Invalid
		res.Finish(code, fail(code, "-h asks for the usage text, not a step"), 0)
	}
	data, merr := json.MarshalIndent(res, "", "  ")
	if merr != nil {
		// Only a bug in the result types gets here: never report success.
		code = exitcode.Failure
		data = nil
	}
	return Outcome{Code: code, Summary: summary(res), Result: append(data, '\n')}
}

// execution is one parsed and run invocation.
type execution struct {
	inv   *cmdline.Invocation // even when invalid: the result file's path
	res   result              // finished with code
	code  int
	err   error
	calls int64
}

// execute parses the command line and runs the command.
func execute(ctx context.Context, args []string, env func(string) (string, bool), log func(string, ...any), t timing) execution {
	inv, err := cmdline.Parse(args, env)
	x := execution{inv: inv, res: newResult(inv), err: err}
	if errors.Is(err, cmdline.ErrHelp) {
		return x
	}
	if err == nil {
		var r *runner
		if r, err = newRunner(inv, t, log); err == nil {
			err = r.dispatch(ctx, inv, x.res)
			x.calls = r.c.Calls()
		}
	}
	x.err, x.code = err, exitcode.Of(err)
	x.res.Finish(x.code, err, x.calls)
	return x
}

// newResult is the result value of the command, filled in as it runs.
func newResult(inv *cmdline.Invocation) result {
	h := stepresult.NewHeader(inv.Command)
	switch inv.Command {
	case cmdline.CmdSyncAndWait:
		return &stepresult.SyncResult{Header: h, App: inv.Sync.App}
	case cmdline.CmdValidate:
		return &stepresult.ValidateResult{Header: h}
	case cmdline.CmdTeardown:
		t := inv.Teardown
		return &stepresult.TeardownResult{Header: h, App: t.App, Platform: t.Platform, PVPolicy: t.PVPolicy, CRDPolicy: t.CRDPolicy}
	}
	return &h
}

// newRunner builds the API client. sync-and-wait reads its manifest first:
// the manifest's namespace is the application namespace when
// --app-namespace is not given.
func newRunner(inv *cmdline.Invocation, t timing, log func(string, ...any)) (*runner, error) {
	g := inv.Global
	if inv.Command == cmdline.CmdSyncAndWait {
		m, err := loadManifest(inv.Sync)
		if err != nil {
			return nil, err
		}
		inv.Manifest = m
		if ns := manifestNamespace(m); m != nil && ns != "" {
			if g.AppNamespace != "" && g.AppNamespace != ns {
				return nil, fail(exitcode.Invalid, "the manifest's namespace %q differs from --app-namespace %q", ns, g.AppNamespace)
			}
			g.AppNamespace = ns
		}
	}
	c, err := argocd.New(argocd.Config{
		Server: g.Server, Plaintext: g.Plaintext, InsecureSkipVerify: g.InsecureSkipVerify,
		CAFile: g.CAFile, RootPath: g.RootPath, TokenFile: g.TokenFile,
		AppNamespace: g.AppNamespace, RequestTimeout: g.RequestTimeout,
	})
	if err != nil {
		return nil, fail(exitcode.Invalid, "%v", err)
	}
	return &runner{c: c, t: t, requestTimeout: g.RequestTimeout, log: log}, nil
}

func (r *runner) dispatch(ctx context.Context, inv *cmdline.Invocation, res result) error {
	switch inv.Command {
	case cmdline.CmdSyncAndWait:
		sr := res.(*stepresult.SyncResult)
		sr.AppNamespace = r.c.AppNamespace()
		return r.syncAndWait(ctx, inv.Sync, inv.Manifest, sr)
	case cmdline.CmdValidate:
		return r.validate(ctx, inv.Validate, res.(*stepresult.ValidateResult))
	case cmdline.CmdTeardown:
		return r.teardown(ctx, inv.Teardown, res.(*stepresult.TeardownResult))
	}
	return fail(exitcode.Invalid, "unknown command %q", inv.Command)
}

// FailedOutcome is the outcome of an invocation that never ran: the
// command's result header with code and err, as the pod would report them.
func FailedOutcome(command string, code int, err error) Outcome {
	h := stepresult.NewHeader(command)
	h.Finish(code, err, 0)
	data, _ := json.MarshalIndent(&h, "", "  ")
	return Outcome{Code: code, Summary: summary(&h), Result: append(data, '\n')}
}
