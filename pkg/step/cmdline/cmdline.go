// Package cmdline is deploystep's command line: the commands, their flags,
// each flag's environment variable (docs/step-contract.md), and the checks
// that need no API call. An invalid invocation exits 3 before Argo CD is
// asked anything. Standard library only: deploystep links it.
package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/deployctl/deployctl/internal/duration"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/check"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// Every flag has an environment variable (docs/step-contract.md): the
// connection flags use the names in the contract's table, command flags the
// upper-cased flag name with "-" → "_". A flag on the command line wins over
// the environment; repeated flags take a newline-separated value.

// Usage is the text -h prints, and an invalid invocation after its error.
const Usage = `deploystep — sync, validate and tear down one node through the Argo CD API.

Usage:
  deploystep [connection flags] sync-and-wait --app NAME [--manifest FILE | --manifest-base64 B64]
      --sync-timeout D --health-timeout D
      [--check resource:GROUP/KIND/NAMESPACE/NAME]... [--check http:URL=CODES]... [--allow-suspended]
      [--health-customization GROUP/KIND=sha256:HEX]... [--sync-id HEX]
  deploystep [connection flags] validate --app NAME [--app NAME]...
  deploystep [connection flags] teardown --app NAME --timeout D [--pv-policy retain|delete]
      [--crd-policy retain|delete] --platform NAME --confirm VALUE [--cascade=false]

Connection flags (env var in brackets):
  --server [ARGOCD_SERVER]  --plaintext [ARGOCD_PLAINTEXT]  --insecure-skip-verify [ARGOCD_INSECURE_SKIP_VERIFY]
  --ca-file [ARGOCD_CA_FILE]  --root-path [ARGOCD_ROOT_PATH]  --token-file [ARGOCD_TOKEN_FILE]
  --app-namespace [ARGOCD_APP_NAMESPACE]  --result-file [RESULT_FILE]  --request-timeout [REQUEST_TIMEOUT]

  deploystep serve [--listen ADDR] [--requeue D] [--token-file F]   (the Argo executor plugin)

Exit codes: 0 done, 1 failed, 2 partial, 3 invalid arguments, 4 timeout, 75 transient.
`

// Command names.
const (
	CmdSyncAndWait = stepcontract.CmdSyncAndWait
	CmdValidate    = stepcontract.CmdValidate
	CmdTeardown    = stepcontract.CmdTeardown
)

// Teardown's --pv-policy and --crd-policy: what happens to what deleting the
// Application leaves behind.
const (
	PolicyRetain = stepcontract.PolicyRetain
	PolicyDelete = stepcontract.PolicyDelete
)

// Invocation is the parsed command line: the connection flags and the
// command's value, whose fields are the step contract's
// (pkg/stepcontract).
type Invocation struct {
	Command  string
	Global   stepcontract.Connection
	Sync     stepcontract.SyncAndWait
	Validate stepcontract.Validate
	Teardown stepcontract.Teardown
	Manifest []byte // sync-and-wait: the loaded manifest, nil if none (set by the step)
}

// ErrHelp asks for the usage text and exit 0.
var ErrHelp = errors.New("help requested")

// Parse parses global flags, the command and its flags, each as the step
// contract declares it (stepcontract: flag, environment variable,
// default). Connection flags are accepted before and after the command.
// The invocation is returned even with an error, so that the result file
// can still be written.
func Parse(args []string, env func(string) (string, bool)) (*Invocation, error) {
	inv := &Invocation{}
	g := newBinder("deploystep", env)
	for _, p := range inv.Global.Params() {
		g.bind(p)
	}
	if err := g.parse(args); err != nil {
		return inv, err
	}
	rest := g.fs.Args()
	if len(rest) == 0 {
		return inv, invalid("no command given (sync-and-wait, validate or teardown)")
	}
	inv.Command = rest[0]
	c := newBinder(inv.Command, env)
	g.fs.VisitAll(func(f *flag.Flag) { c.fs.Var(f.Value, f.Name, f.Usage) })
	cmd := inv.command()
	if cmd == nil {
		return inv, invalid("unknown command %q (want sync-and-wait, validate or teardown)", inv.Command)
	}
	for _, p := range cmd.Params() {
		if p.Reader.Step() && !p.Global {
			c.bind(p)
		}
	}
	if err := c.parse(rest[1:]); err != nil {
		return inv, err
	}
	if extra := c.fs.Args(); len(extra) > 0 {
		return inv, invalid("unexpected argument %q", extra[0])
	}
	return inv, inv.check()
}

// command is the invocation's command value, nil for an unknown command.
func (inv *Invocation) command() stepcontract.Command {
	switch inv.Command {
	case CmdSyncAndWait:
		return &inv.Sync
	case CmdValidate:
		return &inv.Validate
	case CmdTeardown:
		return &inv.Teardown
	}
	return nil
}

// check validates what flag parsing cannot.
func (inv *Invocation) check() error {
	g := inv.Global
	if g.Server == "" {
		return invalid("--server (ARGOCD_SERVER) is required")
	}
	if g.RequestTimeout <= 0 {
		return invalid("--request-timeout must be positive")
	}
	if g.ResultFile == "" {
		return invalid("--result-file must not be empty")
	}
	switch inv.Command {
	case CmdSyncAndWait:
		s := inv.Sync
		if err := checkAppName(s.App); err != nil {
			return err
		}
		if s.ManifestFile != "" && s.ManifestBase64 != "" {
			return invalid("give --manifest or --manifest-base64, not both")
		}
		if s.SyncTimeout <= 0 || s.HealthTimeout <= 0 {
			return invalid("--sync-timeout and --health-timeout must be positive")
		}
		// The node's deadline is their sum: wrapped, it would have passed
		// at once (a transient exit the template retries).
		if _, err := s.Limit(); err != nil {
			return invalid("--sync-timeout plus --health-timeout: %v", err)
		}
		for _, c := range s.Checks {
			if _, err := check.Parse(c); err != nil {
				return err
			}
		}
		if s.SyncID != "" && !validSyncID(s.SyncID) {
			return invalid("--sync-id (SYNC_ID) must be 16 to 64 lower-case hex digits, not %q", s.SyncID)
		}
	case CmdValidate:
		if len(inv.Validate.Apps) == 0 {
			return invalid("validate needs at least one --app")
		}
		for _, a := range inv.Validate.Apps {
			if err := checkAppName(a); err != nil {
				return err
			}
		}
	case CmdTeardown:
		t := inv.Teardown
		if err := checkAppName(t.App); err != nil {
			return err
		}
		if t.Timeout <= 0 {
			return invalid("--timeout must be positive")
		}
		for _, p := range [][2]string{{"pv-policy", t.PVPolicy}, {"crd-policy", t.CRDPolicy}} {
			if p[1] != PolicyRetain && p[1] != PolicyDelete {
				return invalid("--%s must be %q or %q, not %q", p[0], PolicyRetain, PolicyDelete, p[1])
			}
		}
		if t.Platform == "" || t.Confirm != t.Platform {
			return invalid("teardown refused: --confirm must equal --platform (%q); nothing was deleted", t.Platform)
		}
	}
	return nil
}

// validSyncID: an id the step can put into Argo CD's operation info as is.
func validSyncID(id string) bool {
	if len(id) < 16 || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func checkAppName(name string) error {
	if name == "" {
		return invalid("--app is required")
	}
	if strings.ContainsAny(name, "/ \t\n") {
		return invalid("invalid application name %q", name)
	}
	return nil
}

// binder defines flags whose defaults come from the environment.
type binder struct {
	fs     *flag.FlagSet
	env    func(string) (string, bool)
	envErr error
}

func newBinder(name string, env func(string) (string, bool)) *binder {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &binder{fs: fs, env: env}
}

// bind defines p's flag, its default taken from p's environment variable,
// else from the contract's StepDefault.
func (b *binder) bind(p stepcontract.Param) {
	env := p.EnvVar()
	switch v := p.Ptr().(type) {
	case *string:
		b.strEnv(v, p.Flag, env, p.StepDefault, p.Usage)
	case *bool:
		def, _ := strconv.ParseBool(p.StepDefault) // "" is false
		b.boolEnv(v, p.Flag, env, def, p.Usage)
	case *time.Duration:
		var def time.Duration
		if p.StepDefault != "" {
			var err error
			if def, err = duration.Parse(p.StepDefault); err != nil {
				panic("cmdline: the contract's default of --" + p.Flag + ": " + err.Error())
			}
		}
		b.durationEnv(v, p.Flag, env, def, p.Usage)
	case *[]string:
		b.list(v, p.Flag, env, p.Usage)
	default:
		panic(fmt.Sprintf("cmdline: --%s binds a %T, which deploystep cannot parse", p.Flag, v))
	}
}

func (b *binder) strEnv(p *string, name, env, def, usage string) {
	if v, ok := b.env(env); ok {
		def = v
	}
	b.fs.StringVar(p, name, def, usage)
}

func (b *binder) boolEnv(p *bool, name, env string, def bool, usage string) {
	if v, ok := b.env(env); ok && v != "" {
		parsed, err := strconv.ParseBool(v)
		if err != nil {
			b.noteEnvErr(env, v, err)
		}
		def = parsed
	}
	b.fs.BoolVar(p, name, def, usage)
}

func (b *binder) durationEnv(p *time.Duration, name, env string, def time.Duration, usage string) {
	if v, ok := b.env(env); ok && v != "" {
		parsed, err := duration.Parse(v)
		if err != nil {
			b.noteEnvErr(env, v, err)
		} else {
			def = parsed
		}
	}
	*p = def
	b.fs.Var(duration.Flag{D: p}, name, usage)
}

func (b *binder) list(p *[]string, name, env, usage string) {
	l := &list{p: p}
	if v, ok := b.env(env); ok {
		*p = stepcontract.Lines(v)
		l.fromEnv = true
	}
	b.fs.Var(l, name, usage)
}

func (b *binder) noteEnvErr(env, v string, err error) {
	if b.envErr == nil {
		b.envErr = invalid("environment variable %s=%q: %v", env, v, err)
	}
}

func (b *binder) parse(args []string) error {
	if b.envErr != nil {
		return b.envErr
	}
	if err := b.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ErrHelp
		}
		return invalid("%v", err)
	}
	return nil
}

// list is a repeatable flag. Values from the environment are replaced,
// not extended, by the first occurrence on the command line.
type list struct {
	p       *[]string
	fromEnv bool
}

func (l *list) String() string {
	if l.p == nil {
		return ""
	}
	return strings.Join(*l.p, ",")
}

func (l *list) Set(v string) error {
	if l.fromEnv {
		*l.p, l.fromEnv = nil, false
	}
	*l.p = append(*l.p, v)
	return nil
}

func invalid(format string, args ...any) error {
	return exitcode.With(exitcode.Invalid, fmt.Errorf(format, args...))
}
