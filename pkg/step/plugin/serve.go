package plugin

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/deployctl/deployctl/internal/safehttp"
	"github.com/deployctl/deployctl/pkg/exitcode"
)

// Usage is `deploystep serve -h`.
const Usage = `deploystep serve — the Argo Workflows executor plugin (docs/step-contract.md, "Plugin mode").

Usage:
  deploystep serve [--listen ADDR] [--requeue D] [--token-file F]

  --listen      address to listen on (default 127.0.0.1:4355: only the agent, in the same pod, reaches it)
  --requeue     how soon the agent calls again for a running node (default 250ms)
  --token-file  the agent's bearer token (default /var/run/argo/token)
`

// SoftMemoryLimit is the Go runtime's soft memory limit in the sidecar
// (GOMEMLIMIT in its environment replaces it): the generated sidecar's
// limit is 320 MiB, and under it the garbage collector collects the
// refused answers and results at once instead of letting the heap grow to
// twice what is live.
const SoftMemoryLimit = 192 << 20

// Main is `deploystep serve ARGS`: it serves until SIGTERM or SIGINT,
// then answers on, starting no new job, until the kubelet kills it at the
// end of the pod's grace period (serve): the agent beside it may call
// until then. The next agent's plugin adopts the operations.
func Main(args []string) int {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(SoftMemoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, nil, args, os.Stdout, os.Stderr, nil)
}

// serve runs the server until ctx ends, then drains until killed is closed:
// nil in production, where only the kubelet's SIGKILL ends it (a deleted
// agent pod's agent may call until then: v3.7.18's did, and picked up new
// nodes meanwhile; no silence proves it gone). ready, if set, gets the
// listening address.
func serve(ctx context.Context, killed <-chan struct{}, args []string, stdout, stderr io.Writer, ready func(addr string)) int {
	fs := flag.NewFlagSet("deploystep serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", "127.0.0.1:4355", "")
	requeue := fs.Duration("requeue", 250*time.Millisecond, "")
	tokenFile := fs.String("token-file", "/var/run/argo/token", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, Usage)
			return exitcode.OK
		}
		fmt.Fprintf(stderr, "deploystep serve: %v\n\n%s", err, Usage)
		return exitcode.Invalid
	}
	if fs.NArg() > 0 || *requeue <= 0 {
		fmt.Fprintf(stderr, "deploystep serve: unexpected argument %q or non-positive --requeue\n\n%s", strings.Join(fs.Args(), " "), Usage)
		return exitcode.Invalid
	}
	token, err := safehttp.ReadBearerToken(*tokenFile)
	if err != nil {
		fmt.Fprintf(stderr, "deploystep serve: the agent's token: %v\n", err)
		return exitcode.Invalid
	}
	jobsCtx, endJobs := context.WithCancel(context.Background())
	defer endJobs()
	s, err := New(jobsCtx, Config{Token: token, Requeue: *requeue, Log: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "deploystep serve: %v\n", err)
		return exitcode.Invalid
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "deploystep serve: %v\n", err)
		return exitcode.Invalid
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10}
	fmt.Fprintf(stderr, "deploystep serve: listening on %s\n", l.Addr())
	if ready != nil {
		ready(l.Addr().String())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		fmt.Fprintf(stderr, "deploystep serve: %v\n", err)
		return exitcode.Failure
	case <-ctx.Done():
	}
	// The agent pod is going away, but the agent beside us may call until
	// it is killed: a refused call fails its node for good. Keep answering
	// (jobs go on; no new ones) until killed (the generated agent pod's
	// grace period is 10 s). Their operations go on in Argo CD; the next
	// plugin adopts them.
	s.Drain()
	fmt.Fprintln(stderr, "deploystep serve: stopping: answering until the pod is killed")
	<-killed
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	endJobs()
	s.Wait()
	fmt.Fprintln(stderr, "deploystep serve: stopped")
	return exitcode.OK
}
