package step

import (
	"context"
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

// run parses the command line, runs the command, writes the result file and
// prints one line to stdout; progress goes to stderr.
func run(ctx context.Context, args []string, env func(string) (string, bool), stdout, stderr io.Writer, t timing) int {
	log := newLogger(stderr)
	inv, err := cmdline.Parse(args, env)
	if errors.Is(err, cmdline.ErrHelp) {
		fmt.Fprint(stdout, cmdline.Usage)
		return exitcode.OK
	}
	res := newResult(inv)
	var calls int64
	if err == nil {
		var r *runner
		if r, err = newRunner(inv, t, log); err == nil {
			err = r.dispatch(ctx, inv, res)
			calls = r.c.Calls()
		}
	}
	code := exitcode.Of(err)
	if code == exitcode.Invalid {
		fmt.Fprintf(stderr, "deploystep: %v\n\n%s", err, cmdline.Usage)
	}
	res.Finish(code, err, calls)
	if werr := writeResult(inv.Global.ResultFile, res); werr != nil {
		log("%v", werr)
		if code == exitcode.OK {
			// The workflow reads this file; succeeding without it would
			// hide the outcome.
			code = exitcode.Failure
			res.Finish(code, werr, calls)
		}
	}
	fmt.Fprintln(stdout, summary(res))
	return code
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
