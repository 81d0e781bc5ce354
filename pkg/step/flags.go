package step

import (
	"errors"
	"flag"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/check"
)

// Every flag has an environment variable (docs/step-contract.md): the
// connection flags use the names in the contract's table, command flags the
// upper-cased flag name with "-" → "_". A flag on the command line wins over
// the environment; repeated flags take a newline-separated value.

const usageText = `deploystep — sync, validate and tear down one node through the Argo CD API.

Usage:
  deploystep [connection flags] sync-and-wait --app NAME [--manifest FILE | --manifest-base64 B64]
      --sync-timeout D --health-timeout D
      [--check resource:GROUP/KIND/NAMESPACE/NAME]... [--check http:URL=CODES]... [--allow-suspended]
      [--health-customization GROUP/KIND=sha256:HEX]...
  deploystep [connection flags] validate --app NAME [--app NAME]...
  deploystep [connection flags] teardown --app NAME --timeout D [--pv-policy retain|delete]
      [--crd-policy retain|delete] --platform NAME --confirm VALUE [--cascade=false]

Connection flags (env var in brackets):
  --server [ARGOCD_SERVER]  --plaintext [ARGOCD_PLAINTEXT]  --insecure-skip-verify [ARGOCD_INSECURE_SKIP_VERIFY]
  --ca-file [ARGOCD_CA_FILE]  --root-path [ARGOCD_ROOT_PATH]  --token-file [ARGOCD_TOKEN_FILE]
  --app-namespace [ARGOCD_APP_NAMESPACE]  --result-file [RESULT_FILE]  --request-timeout [REQUEST_TIMEOUT]

Exit codes: 0 done, 1 failed, 2 partial, 3 invalid arguments, 4 timeout, 75 transient.
`

// Command names.
const (
	cmdSyncAndWait = "sync-and-wait"
	cmdValidate    = "validate"
	cmdTeardown    = "teardown"
)

type globalOpts struct {
	server, caFile, rootPath, tokenFile string
	appNamespace, resultFile            string
	plaintext, insecureSkipVerify       bool
	requestTimeout                      time.Duration
}

type syncOpts struct {
	app                       string
	manifestFile, manifestB64 string
	syncTimeout               time.Duration
	healthTimeout             time.Duration
	checks                    stringList
	allowSuspended            bool
	healthCustomizations      stringList // settings.go
}

type validateOpts struct {
	apps stringList
}

type teardownOpts struct {
	app               string
	timeout           time.Duration
	pvPolicy          string
	crdPolicy         string
	platform, confirm string
	cascade           bool
}

// invocation is the parsed command line.
type invocation struct {
	command  string
	global   globalOpts
	sync     syncOpts
	validate validateOpts
	teardown teardownOpts
	manifest []byte // sync-and-wait: the loaded manifest, nil if none
}

// errHelp asks for the usage text and exit 0.
var errHelp = errors.New("help requested")

// parseArgs parses global flags, the command and its flags. Connection flags
// are accepted before and after the command. The invocation is returned even
// with an error, so that the result file can still be written.
func parseArgs(args []string, env func(string) (string, bool)) (*invocation, error) {
	inv := &invocation{}
	g := newBinder("deploystep", env)
	g.globals(&inv.global)
	if err := g.parse(args); err != nil {
		return inv, err
	}
	rest := g.fs.Args()
	if len(rest) == 0 {
		return inv, fail(exitcode.Invalid, "no command given (sync-and-wait, validate or teardown)")
	}
	inv.command = rest[0]
	c := newBinder(inv.command, env)
	g.fs.VisitAll(func(f *flag.Flag) { c.fs.Var(f.Value, f.Name, f.Usage) })
	switch inv.command {
	case cmdSyncAndWait:
		s := &inv.sync
		c.str(&s.app, "app", "", "Application name")
		c.str(&s.manifestFile, "manifest", "", "Application manifest (JSON) to create it from when absent")
		c.str(&s.manifestB64, "manifest-base64", "", "the same, base64-encoded")
		c.duration(&s.syncTimeout, "sync-timeout", 5*time.Minute, "how long the sync operation may take")
		c.duration(&s.healthTimeout, "health-timeout", 5*time.Minute, "how long to wait for Healthy after the sync")
		c.list(&s.checks, "check", "extra check: resource:GROUP/KIND/NAMESPACE/NAME or http:URL=CODES (repeatable)")
		c.boolean(&s.allowSuspended, "allow-suspended", false, "accept Suspended as healthy")
		c.list(&s.healthCustomizations, "health-customization", "a health Lua Argo CD must have before anything syncs: GROUP/KIND=sha256:HEX (repeatable)")
	case cmdValidate:
		c.list(&inv.validate.apps, "app", "Application name (repeatable)")
	case cmdTeardown:
		t := &inv.teardown
		c.str(&t.app, "app", "", "Application name")
		c.duration(&t.timeout, "timeout", 10*time.Minute, "how long deletion may take")
		c.str(&t.pvPolicy, "pv-policy", "retain", "retain or delete the PersistentVolumeClaims of StatefulSets")
		c.str(&t.crdPolicy, "crd-policy", "retain", "retain or delete the CustomResourceDefinitions the app manages (Argo CD never deletes them)")
		c.str(&t.platform, "platform", "", "platform name")
		c.str(&t.confirm, "confirm", "", "must equal --platform")
		c.boolean(&t.cascade, "cascade", true, "delete the app's resources with it; false orphans them (the root Application, whose children have their own teardown nodes)")
	default:
		return inv, fail(exitcode.Invalid, "unknown command %q (want sync-and-wait, validate or teardown)", inv.command)
	}
	if err := c.parse(rest[1:]); err != nil {
		return inv, err
	}
	if extra := c.fs.Args(); len(extra) > 0 {
		return inv, fail(exitcode.Invalid, "unexpected argument %q", extra[0])
	}
	return inv, inv.check()
}

// check validates what flag parsing cannot.
func (inv *invocation) check() error {
	g := inv.global
	if g.server == "" {
		return fail(exitcode.Invalid, "--server (ARGOCD_SERVER) is required")
	}
	if g.requestTimeout <= 0 {
		return fail(exitcode.Invalid, "--request-timeout must be positive")
	}
	if g.resultFile == "" {
		return fail(exitcode.Invalid, "--result-file must not be empty")
	}
	switch inv.command {
	case cmdSyncAndWait:
		s := inv.sync
		if err := checkAppName(s.app); err != nil {
			return err
		}
		if s.manifestFile != "" && s.manifestB64 != "" {
			return fail(exitcode.Invalid, "give --manifest or --manifest-base64, not both")
		}
		if s.syncTimeout <= 0 || s.healthTimeout <= 0 {
			return fail(exitcode.Invalid, "--sync-timeout and --health-timeout must be positive")
		}
		for _, c := range s.checks.values {
			if _, err := check.Parse(c); err != nil {
				return err
			}
		}
	case cmdValidate:
		if len(inv.validate.apps.values) == 0 {
			return fail(exitcode.Invalid, "validate needs at least one --app")
		}
		for _, a := range inv.validate.apps.values {
			if err := checkAppName(a); err != nil {
				return err
			}
		}
	case cmdTeardown:
		t := inv.teardown
		if err := checkAppName(t.app); err != nil {
			return err
		}
		if t.timeout <= 0 {
			return fail(exitcode.Invalid, "--timeout must be positive")
		}
		for _, p := range [][2]string{{"pv-policy", t.pvPolicy}, {"crd-policy", t.crdPolicy}} {
			if p[1] != policyRetain && p[1] != policyDelete {
				return fail(exitcode.Invalid, "--%s must be %q or %q, not %q", p[0], policyRetain, policyDelete, p[1])
			}
		}
		if t.platform == "" || t.confirm != t.platform {
			return fail(exitcode.Invalid, "teardown refused: --confirm must equal --platform (%q); nothing was deleted", t.platform)
		}
	}
	return nil
}

func checkAppName(name string) error {
	if name == "" {
		return fail(exitcode.Invalid, "--app is required")
	}
	if strings.ContainsAny(name, "/ \t\n") {
		return fail(exitcode.Invalid, "invalid application name %q", name)
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

func (b *binder) globals(g *globalOpts) {
	b.strEnv(&g.server, "server", "ARGOCD_SERVER", "", "Argo CD API host:port")
	b.boolEnv(&g.plaintext, "plaintext", "ARGOCD_PLAINTEXT", false, "HTTP instead of HTTPS")
	b.boolEnv(&g.insecureSkipVerify, "insecure-skip-verify", "ARGOCD_INSECURE_SKIP_VERIFY", false, "accept any TLS certificate")
	b.strEnv(&g.caFile, "ca-file", "ARGOCD_CA_FILE", "", "PEM CA bundle for the server certificate")
	b.strEnv(&g.rootPath, "root-path", "ARGOCD_ROOT_PATH", "", "argocd-server --rootpath prefix")
	b.strEnv(&g.tokenFile, "token-file", "ARGOCD_TOKEN_FILE", "/var/run/secrets/argocd/token", "file holding the API token")
	b.strEnv(&g.appNamespace, "app-namespace", "ARGOCD_APP_NAMESPACE", "", "namespace of the Application objects")
	b.strEnv(&g.resultFile, "result-file", "RESULT_FILE", "/tmp/deploystep/result.json", "where the JSON result is written")
	b.durationEnv(&g.requestTimeout, "request-timeout", "REQUEST_TIMEOUT", 30*time.Second, "deadline of every API request")
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
		parsed, err := time.ParseDuration(v)
		if err != nil {
			b.noteEnvErr(env, v, err)
		} else {
			def = parsed
		}
	}
	b.fs.DurationVar(p, name, def, usage)
}

func (b *binder) list(p *stringList, name, usage string) {
	if v, ok := b.env(envName(name)); ok {
		for _, line := range strings.Split(v, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				p.values = append(p.values, line)
			}
		}
		p.fromEnv = true
	}
	b.fs.Var(p, name, usage)
}

func (b *binder) noteEnvErr(env, v string, err error) {
	if b.envErr == nil {
		b.envErr = fail(exitcode.Invalid, "environment variable %s=%q: %v", env, v, err)
	}
}

func (b *binder) parse(args []string) error {
	if b.envErr != nil {
		return b.envErr
	}
	if err := b.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return fail(exitcode.Invalid, "%v", err)
	}
	return nil
}

// stringList is a repeatable flag. Values from the environment are replaced,
// not extended, by the first occurrence on the command line.
type stringList struct {
	values  []string
	fromEnv bool
}

func (l *stringList) String() string { return strings.Join(l.values, ",") }

func (l *stringList) Set(v string) error {
	if l.fromEnv {
		l.values, l.fromEnv = nil, false
	}
	l.values = append(l.values, v)
	return nil
}
