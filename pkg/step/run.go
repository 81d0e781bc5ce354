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
	inv, err := parseArgs(args, env)
	if errors.Is(err, errHelp) {
		fmt.Fprint(stdout, usageText)
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
		fmt.Fprintf(stderr, "deploystep: %v\n\n%s", err, usageText)
	}
	res.Finish(code, err, calls)
	if werr := writeResult(inv.global.resultFile, res); werr != nil {
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
func newResult(inv *invocation) result {
	h := stepresult.NewHeader(inv.command)
	switch inv.command {
	case cmdSyncAndWait:
		return &stepresult.SyncResult{Header: h, App: inv.sync.app}
	case cmdValidate:
		return &stepresult.ValidateResult{Header: h}
	case cmdTeardown:
		t := inv.teardown
		return &stepresult.TeardownResult{Header: h, App: t.app, Platform: t.platform, PVPolicy: t.pvPolicy, CRDPolicy: t.crdPolicy}
	}
	return &h
}

// newRunner builds the API client. sync-and-wait reads its manifest first:
// the manifest's namespace is the application namespace when
// --app-namespace is not given.
func newRunner(inv *invocation, t timing, log func(string, ...any)) (*runner, error) {
	g := inv.global
	if inv.command == cmdSyncAndWait {
		m, err := loadManifest(inv.sync)
		if err != nil {
			return nil, err
		}
		inv.manifest = m
		if ns := manifestNamespace(m); m != nil && ns != "" {
			if g.appNamespace != "" && g.appNamespace != ns {
				return nil, fail(exitcode.Invalid, "the manifest's namespace %q differs from --app-namespace %q", ns, g.appNamespace)
			}
			g.appNamespace = ns
		}
	}
	c, err := argocd.New(argocd.Config{
		Server: g.server, Plaintext: g.plaintext, InsecureSkipVerify: g.insecureSkipVerify,
		CAFile: g.caFile, RootPath: g.rootPath, TokenFile: g.tokenFile,
		AppNamespace: g.appNamespace, RequestTimeout: g.requestTimeout,
	})
	if err != nil {
		return nil, fail(exitcode.Invalid, "%v", err)
	}
	return &runner{c: c, t: t, requestTimeout: g.requestTimeout, log: log}, nil
}

func (r *runner) dispatch(ctx context.Context, inv *invocation, res result) error {
	switch inv.command {
	case cmdSyncAndWait:
		sr := res.(*stepresult.SyncResult)
		sr.AppNamespace = r.c.AppNamespace()
		return r.syncAndWait(ctx, inv.sync, inv.manifest, sr)
	case cmdValidate:
		return r.validate(ctx, inv.validate, res.(*stepresult.ValidateResult))
	case cmdTeardown:
		return r.teardown(ctx, inv.teardown, res.(*stepresult.TeardownResult))
	}
	return fail(exitcode.Invalid, "unknown command %q", inv.command)
}
