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
	CmdSyncAndWait = "sync-and-wait"
	CmdValidate    = "validate"
	CmdTeardown    = "teardown"
)

// Teardown's --pv-policy and --crd-policy: what happens to what deleting the
// Application leaves behind.
const (
	PolicyRetain = "retain"
	PolicyDelete = "delete"
)

// GlobalOpts are the connection flags, accepted before and after the
// command.
type GlobalOpts struct {
	Server, CAFile, RootPath, TokenFile string
	AppNamespace, ResultFile            string
	Plaintext, InsecureSkipVerify       bool
	RequestTimeout                      time.Duration
}

// SyncOpts are sync-and-wait's flags.
type SyncOpts struct {
	App                       string
	ManifestFile, ManifestB64 string
	SyncTimeout               time.Duration
	HealthTimeout             time.Duration
	Checks                    List // pkg/step/check
	AllowSuspended            bool
	HealthCustomizations      List // the step's settings.go
	// SyncID names this node's sync operation across runs of the step
	// (plugin mode: derived from the workflow node, docs/step-contract.md):
	// an operation carrying it is adopted instead of syncing again.
	// Empty: a new random id per run.
	SyncID string
}

// ValidateOpts are validate's flags.
type ValidateOpts struct {
	Apps List
}

// TeardownOpts are teardown's flags.
type TeardownOpts struct {
	App               string
	Timeout           time.Duration
	PVPolicy          string
	CRDPolicy         string
	Platform, Confirm string
	Cascade           bool
}

// Invocation is the parsed command line.
type Invocation struct {
	Command  string
	Global   GlobalOpts
	Sync     SyncOpts
	Validate ValidateOpts
	Teardown TeardownOpts
	Manifest []byte // sync-and-wait: the loaded manifest, nil if none (set by the step)
}

// ErrHelp asks for the usage text and exit 0.
var ErrHelp = errors.New("help requested")

// Parse parses global flags, the command and its flags. Connection flags
// are accepted before and after the command. The invocation is returned even
// with an error, so that the result file can still be written.
func Parse(args []string, env func(string) (string, bool)) (*Invocation, error) {
	inv := &Invocation{}
	g := newBinder("deploystep", env)
	g.globals(&inv.Global)
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
	switch inv.Command {
	case CmdSyncAndWait:
		s := &inv.Sync
		c.str(&s.App, "app", "", "Application name")
		c.str(&s.ManifestFile, "manifest", "", "Application manifest (JSON) to create it from when absent")
		c.str(&s.ManifestB64, "manifest-base64", "", "the same, base64-encoded")
		c.duration(&s.SyncTimeout, "sync-timeout", 5*time.Minute, "how long the sync operation may take")
		c.duration(&s.HealthTimeout, "health-timeout", 5*time.Minute, "how long to wait for Healthy after the sync")
		c.list(&s.Checks, "check", "extra check: resource:GROUP/KIND/NAMESPACE/NAME or http:URL=CODES (repeatable)")
		c.boolean(&s.AllowSuspended, "allow-suspended", false, "accept Suspended as healthy")
		c.list(&s.HealthCustomizations, "health-customization", "a health Lua Argo CD must have before anything syncs: GROUP/KIND=sha256:HEX (repeatable)")
		c.str(&s.SyncID, "sync-id", "", "this node's sync id (16-64 hex digits): adopt our operation carrying it instead of syncing again")
	case CmdValidate:
		c.list(&inv.Validate.Apps, "app", "Application name (repeatable)")
	case CmdTeardown:
		t := &inv.Teardown
		c.str(&t.App, "app", "", "Application name")
		c.duration(&t.Timeout, "timeout", 10*time.Minute, "how long deletion may take")
		c.str(&t.PVPolicy, "pv-policy", "retain", "retain or delete the PersistentVolumeClaims of StatefulSets")
		c.str(&t.CRDPolicy, "crd-policy", "retain", "retain or delete the CustomResourceDefinitions the app manages (Argo CD never deletes them)")
		c.str(&t.Platform, "platform", "", "platform name")
		c.str(&t.Confirm, "confirm", "", "must equal --platform")
		c.boolean(&t.Cascade, "cascade", true, "delete the app's resources with it; false orphans them (the root Application, whose children have their own teardown nodes)")
	default:
		return inv, invalid("unknown command %q (want sync-and-wait, validate or teardown)", inv.Command)
	}
	if err := c.parse(rest[1:]); err != nil {
		return inv, err
	}
	if extra := c.fs.Args(); len(extra) > 0 {
		return inv, invalid("unexpected argument %q", extra[0])
	}
	return inv, inv.check()
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
		if s.ManifestFile != "" && s.ManifestB64 != "" {
			return invalid("give --manifest or --manifest-base64, not both")
		}
		if s.SyncTimeout <= 0 || s.HealthTimeout <= 0 {
			return invalid("--sync-timeout and --health-timeout must be positive")
		}
		// The node's deadline is their sum: wrapped, it would have passed
		// at once (a transient exit the template retries).
		if _, err := duration.Sum(s.SyncTimeout, s.HealthTimeout); err != nil {
			return invalid("--sync-timeout plus --health-timeout: %v", err)
		}
		for _, c := range s.Checks.Values {
			if _, err := check.Parse(c); err != nil {
				return err
			}
		}
		if s.SyncID != "" && !validSyncID(s.SyncID) {
			return invalid("--sync-id (SYNC_ID) must be 16 to 64 lower-case hex digits, not %q", s.SyncID)
		}
	case CmdValidate:
		if len(inv.Validate.Apps.Values) == 0 {
			return invalid("validate needs at least one --app")
		}
		for _, a := range inv.Validate.Apps.Values {
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

func (b *binder) globals(g *GlobalOpts) {
	b.strEnv(&g.Server, "server", "ARGOCD_SERVER", "", "Argo CD API host:port")
	b.boolEnv(&g.Plaintext, "plaintext", "ARGOCD_PLAINTEXT", false, "HTTP instead of HTTPS")
	b.boolEnv(&g.InsecureSkipVerify, "insecure-skip-verify", "ARGOCD_INSECURE_SKIP_VERIFY", false, "accept any TLS certificate")
	b.strEnv(&g.CAFile, "ca-file", "ARGOCD_CA_FILE", "", "PEM CA bundle for the server certificate")
	b.strEnv(&g.RootPath, "root-path", "ARGOCD_ROOT_PATH", "", "argocd-server --rootpath prefix")
	b.strEnv(&g.TokenFile, "token-file", "ARGOCD_TOKEN_FILE", "/var/run/secrets/argocd/token", "file holding the API token")
	b.strEnv(&g.AppNamespace, "app-namespace", "ARGOCD_APP_NAMESPACE", "", "namespace of the Application objects")
	b.strEnv(&g.ResultFile, "result-file", "RESULT_FILE", "/tmp/deploystep/result.json", "where the JSON result is written")
	b.durationEnv(&g.RequestTimeout, "request-timeout", "REQUEST_TIMEOUT", 30*time.Second, "deadline of every API request")
}

func envName(flagName string) string {
	return strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (b *binder) str(p *string, name, def, usage string) {
	b.strEnv(p, name, envName(name), def, usage)
}
func (b *binder) boolean(p *bool, name string, def bool, usage string) {
	b.boolEnv(p, name, envName(name), def, usage)
}
func (b *binder) duration(p *time.Duration, name string, def time.Duration, usage string) {
	b.durationEnv(p, name, envName(name), def, usage)
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

func (b *binder) list(p *List, name, usage string) {
	if v, ok := b.env(envName(name)); ok {
		for _, line := range strings.Split(v, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				p.Values = append(p.Values, line)
			}
		}
		p.fromEnv = true
	}
	b.fs.Var(p, name, usage)
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

// List is a repeatable flag. Values from the environment are replaced,
// not extended, by the first occurrence on the command line.
type List struct {
	Values  []string
	fromEnv bool
}

func (l *List) String() string { return strings.Join(l.Values, ",") }

func (l *List) Set(v string) error {
	if l.fromEnv {
		l.Values, l.fromEnv = nil, false
	}
	l.Values = append(l.Values, v)
	return nil
}

func invalid(format string, args ...any) error {
	return exitcode.With(exitcode.Invalid, fmt.Errorf(format, args...))
}
