package executor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/deployctl/deployctl/internal/duration"
	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/redact"
	"github.com/deployctl/deployctl/internal/safehttp"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/executor/internal/metrics"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/report"
	"github.com/deployctl/deployctl/pkg/spec"
)

// Files under the config directory.
const (
	EnvironmentFileName = "environment.yaml"
	SpecFileName        = "dag.yaml"
)

// Files recognised under the secrets directory; others are ignored.
const (
	// SecretArgoCDToken is the Argo CD API token of the workflow pods: when
	// present, deploy applies it as the spec's argocd.tokenSecret.
	SecretArgoCDToken = "argocd-token"
	// SecretArgoCDCA is the CA bundle of the Argo CD server: when present
	// and the spec names an argocd.caSecret, deploy applies it there.
	SecretArgoCDCA = "argocd-ca.crt"
	// SecretWebhookToken is the bearer token of the Argo Events webhook
	// endpoints: when present, deploy and teardown apply it as the spec's
	// events.webhook.authSecret (default deployctl-webhook-token) in the
	// workflow namespace, where the EventSource mounts it.
	SecretWebhookToken = "webhook-token"
)

// Config is a validated configuration: everything an action needs, read
// before the cluster is touched.
type Config struct {
	Action      Action
	Environment string
	Scope       string
	DryRun      bool
	ForceRun    bool
	// Submit is how deploy and teardown submit a new run: SubmitReference
	// or SubmitInline (submit.go).
	Submit     string
	LogLevel   string
	LogFormat  string
	TraceID    string
	SpanID     string
	Confirm    string
	PVPolicy   string
	CRDPolicy  string
	ConfigDir  string
	SecretsDir string
	// Timeout is the action's deadline; 0 means "derive it from the plan".
	Timeout     time.Duration
	ReportFile  string
	MetricsFile string
	MetricsAddr string

	// Env is environment.yaml; Overrides says what it changed in the spec.
	Env       *report.EnvironmentFile
	Overrides []string
	// DAG is the whole platform (not scoped), environment overrides applied.
	DAG *dag.DAG

	// kubeconfig is the raw kubeconfig (from a file or KUBECONFIG_DATA): a
	// credential, never logged or reported. KubeconfigSource says where it
	// came from, for messages; Context and Cluster are its current ones.
	kubeconfig       *clientcmdapi.Config
	KubeconfigSource string
	Context          string
	Cluster          string
	// secrets are the recognised files of the secrets directory.
	secrets map[string][]byte
	// redact holds every credential value read (kubeconfig credentials, the
	// secrets directory's files, a password in gitRepository); every
	// output sink masks them (see run.go).
	redact *redact.Set
}

// Platform is the platform's name.
func (c *Config) Platform() string { return c.DAG.Platform.Metadata.Name }

// Invalid is a configuration that cannot run: every problem found.
type Invalid struct{ Problems []string }

func (e *Invalid) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid configuration (%d problem", len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteString("s")
	}
	b.WriteString("):")
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p)
	}
	return b.String()
}

// traceRe admits W3C ids, UUIDs and other plain tokens, nothing that could
// break a log line.
var traceRe = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// Load resolves and validates the whole configuration of an action. It
// never contacts the cluster. On any problem it returns a *Config holding
// what could be read (for the report) and an error with exit code 3 that
// lists every problem.
func (o *Options) Load(getenv func(string) (string, bool)) (*Config, error) {
	val, from := o.resolve(getenv)
	c := &Config{Action: o.Action, secrets: map[string][]byte{}, redact: &redact.Set{}}
	var problems []string
	bad := func(key, format string, args ...any) {
		problems = append(problems, name(key)+": "+fmt.Sprintf(format, args...))
	}

	c.LogLevel = strings.ToLower(val["log-level"])
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("log-level", "%q: want debug, info, warn or error", val["log-level"])
	}
	c.LogFormat = strings.ToLower(val["log-format"])
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("log-format", "%q: want text or json", val["log-format"])
	}
	for _, k := range []string{"trace-id", "span-id"} {
		if v := val[k]; v != "" && !traceRe.MatchString(v) {
			bad(k, "%q: want 1-128 letters, digits or . _ : -", v)
		}
	}
	c.TraceID, c.SpanID = val["trace-id"], val["span-id"]
	c.DryRun = parseBool(val, "dry-run", bad)
	c.ForceRun = parseBool(val, "force-run", bad)
	c.Scope = val["scope"]
	scopeOK := true
	if msg := checkScope(c.Scope); msg != "" {
		bad("scope", "%q: %s", c.Scope, msg)
		scopeOK = false
	}
	c.ConfigDir, c.SecretsDir = val["config-dir"], val["secrets-dir"]
	if v := val["timeout"]; v != "" {
		d, err := duration.Parse(v)
		switch {
		case err != nil:
			bad("timeout", "%v", err)
		case d <= 0:
			bad("timeout", "%q: want a positive duration such as 30m or 1h", v)
		}
		c.Timeout = d
	}
	c.ReportFile, c.MetricsFile = reportPaths(val["report"], val["metrics-file"], getenv)
	c.MetricsAddr = val["metrics-addr"]
	if c.MetricsAddr != "" {
		addr, err := metrics.Addr(c.MetricsAddr)
		if err != nil {
			bad("metrics-addr", "%q: %v", c.MetricsAddr, err)
		}
		c.MetricsAddr = addr
	}
	if o.Action == ActionTeardown {
		c.PVPolicy, c.CRDPolicy = val["pv-policy"], val["crd-policy"]
		for _, key := range []string{"pv-policy", "crd-policy"} {
			if v := val[key]; v != "retain" && v != "delete" {
				bad(key, "%q: want retain or delete", v)
			}
		}
		c.Confirm = val["confirm"]
	}
	if o.Action == ActionDeploy || o.Action == ActionTeardown {
		c.Submit = val["submit"]
		if c.Submit != SubmitReference && c.Submit != SubmitInline {
			bad("submit", "%q: want %s or %s", c.Submit, SubmitReference, SubmitInline)
		}
	}

	problems = append(problems, c.loadKubeconfig(val, from)...)

	c.Environment = val["environment"]
	if c.Environment == "" {
		problems = append(problems, name("environment")+": required (the environment to act on)")
	}
	envPath := filepath.Join(c.ConfigDir, EnvironmentFileName)
	env, envLines, envProblems := readEnvironment(envPath, c.redact)
	problems = append(problems, envProblems...)
	c.Env = env
	if env != nil && env.Name != "" && c.Environment != "" && env.Name != c.Environment {
		problems = append(problems, fmt.Sprintf("%s is %q but %s name is %q: the configuration mounted is for another environment",
			name("environment"), c.Environment, envPath, env.Name))
	}
	if env != nil && env.ClusterName != "" && c.Cluster != "" && env.ClusterName != c.Cluster {
		problems = append(problems, fmt.Sprintf("%s clusterName is %q but the kubeconfig's current context %q points at cluster %q: refusing to act on another cluster",
			envPath, env.ClusterName, c.Context, c.Cluster))
	}

	problems = append(problems, c.loadSpec(env, envPath, envLines, scopeOK)...)
	problems = append(problems, c.loadSecrets(from["secrets-dir"] != "default")...)

	if o.Action == ActionTeardown {
		// The missing confirmation is listed whatever else is wrong (a spec
		// that does not load included): everything is fixed in one pass.
		switch {
		case c.Confirm == "" && c.DAG != nil:
			bad("confirm", "required for teardown: set it to the platform's name (%s) to confirm deleting it", c.Platform())
		case c.Confirm == "":
			bad("confirm", "required for teardown: set it to the platform's name (metadata.name of %s) to confirm deleting it",
				filepath.Join(c.ConfigDir, SpecFileName))
		case c.DAG != nil && c.Confirm != c.Platform():
			bad("confirm", "%q does not match the platform's name %q: nothing is deleted without the exact name", c.Confirm, c.Platform())
		}
	}
	if len(problems) > 0 {
		return c, exitcode.With(exitcode.Invalid, &Invalid{Problems: problems})
	}
	return c, nil
}

func parseBool(val map[string]string, key string, bad func(string, string, ...any)) bool {
	v, ok := val[key]
	if !ok || v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		bad(key, "%q: want true or false", v)
	}
	return b
}

// loadKubeconfig reads the kubeconfig from exactly one of KUBECONFIG_PATH
// (or --kubeconfig) and KUBECONFIG_DATA. Messages never quote its content.
// The ambient KUBECONFIG and ~/.kube/config are deliberately not read
// (INV-3, docs/requirements.md#inv-3-no-implicit-state: no state outside the explicit configuration).
func (c *Config) loadKubeconfig(val, from map[string]string) []string {
	path, data := val["kubeconfig"], val["kubeconfig-data"]
	var kc *clientcmdapi.Config
	var err error
	switch {
	case path == "" && data == "":
		return []string{"KUBECONFIG_PATH (or --kubeconfig) or KUBECONFIG_DATA: one is required"}
	case path != "" && data != "":
		return []string{fmt.Sprintf("KUBECONFIG_DATA and %s are both set: give exactly one", from["kubeconfig"])}
	case data != "":
		c.KubeconfigSource = "KUBECONFIG_DATA"
		if kc, err = kube.DecodeKubeconfig(data, c.redact); err != nil {
			return []string{err.Error()}
		}
	default:
		c.KubeconfigSource = path
		if kc, err = kube.ReadKubeconfig(path, c.redact); err != nil {
			return []string{name("kubeconfig") + ": " + err.Error()}
		}
	}
	c.kubeconfig, c.Context = kc, kc.CurrentContext
	ctx, ok := kc.Contexts[kc.CurrentContext]
	switch {
	case kc.CurrentContext == "":
		return []string{c.KubeconfigSource + ": no current-context"}
	case !ok:
		return []string{fmt.Sprintf("%s: current-context %q is not defined", c.KubeconfigSource, kc.CurrentContext)}
	}
	c.Cluster = ctx.Cluster
	if _, ok := kc.Clusters[ctx.Cluster]; !ok {
		return []string{fmt.Sprintf("%s: context %q names cluster %q, which is not defined", c.KubeconfigSource, kc.CurrentContext, ctx.Cluster)}
	}
	return nil
}

// checkScope checks TARGET_SCOPE's form (platform, stack:NAME, app:NAME,
// NAME an app or stack name: a DNS-1123 label) before any spec is read, so
// a malformed scope is listed even when the spec does not load.
func checkScope(scope string) string {
	if scope == "" || scope == "platform" {
		return ""
	}
	kind, n, ok := strings.Cut(scope, ":")
	if !ok || (kind != "stack" && kind != "app") {
		return "want platform, stack:NAME or app:NAME"
	}
	if msgs := validation.IsDNS1123Label(n); len(msgs) > 0 {
		return "the name " + strings.Join(msgs, "; ")
	}
	return ""
}

// loadSpec reads dag.yaml with environment.yaml's overrides as a layer of
// its loading (they meet the spec's rules), applies its namespaces and
// checks the scope.
func (c *Config) loadSpec(env *report.EnvironmentFile, envPath string, envLines map[string]int, scopeOK bool) []string {
	path := filepath.Join(c.ConfigDir, SpecFileName)
	data, err := readlimit.ReadFile(path, readlimit.Spec)
	if err != nil {
		return []string{readlimit.Problem(path, err)}
	}
	// dag.Parse, as lint: a spec with errors still has its graph checked,
	// so a cycle is listed with the other problems.
	var over []spec.Override
	if env != nil {
		over = environmentOverrides(env, envPath, envLines)
	}
	c.DAG, err = dag.ParseWith(path, data, over)
	if err != nil {
		var es spec.Errors
		if errors.As(err, &es) {
			out := make([]string, len(es))
			for i, e := range es {
				out[i] = e.Error()
			}
			return out
		}
		return []string{err.Error()}
	}
	var problems []string
	if env != nil {
		c.Overrides = append(applyEnvironment(c.DAG, env), overrideNotes(c.DAG, over)...)
	}
	if c.Scope == "" {
		c.Scope = "platform"
	}
	if _, err := c.DAG.Scope(c.Scope, dag.Deploy); err != nil && scopeOK {
		problems = append(problems, fmt.Sprintf("%s: %v", name("scope"), err))
	}
	return problems
}

// loadSecrets reads the recognised credential files. A secrets directory
// that does not exist is fine unless it was named explicitly.
func (c *Config) loadSecrets(explicit bool) []string {
	entries, err := os.ReadDir(c.SecretsDir)
	if err != nil {
		if os.IsNotExist(err) && !explicit {
			return nil
		}
		return []string{readlimit.Problem(name("secrets-dir")+": "+c.SecretsDir, err)}
	}
	var problems []string
	for _, e := range entries {
		n := e.Name()
		if n != SecretArgoCDToken && n != SecretArgoCDCA && n != SecretWebhookToken {
			continue
		}
		p := filepath.Join(c.SecretsDir, n)
		b, err := readlimit.ReadFile(p, readlimit.Secret)
		if err == nil {
			c.redact.Add(string(b))
		}
		var notToken error
		if err == nil && n != SecretArgoCDCA {
			// What the steps and Argo Events' webhook would refuse or never match.
			notToken = safehttp.CheckBearerToken(strings.TrimSpace(string(b)))
		}
		switch {
		case err != nil:
			problems = append(problems, readlimit.Problem(p, err))
		case len(strings.TrimSpace(string(b))) == 0:
			problems = append(problems, p+": empty")
		case notToken != nil:
			problems = append(problems, p+": "+notToken.Error())
		default:
			c.secrets[n] = b
		}
	}
	if _, ok := c.secrets[SecretArgoCDCA]; ok && c.DAG != nil && c.DAG.Platform.Spec.ArgoCD.CASecret == nil {
		problems = append(problems, fmt.Sprintf("%s: present, but the spec names no argocd.caSecret to hold it",
			filepath.Join(c.SecretsDir, SecretArgoCDCA)))
	}
	return problems
}

// reportPaths applies the defaults: $REPORT_DIR, else /tmp.
func reportPaths(report, metrics string, getenv func(string) (string, bool)) (string, string) {
	dir := "/tmp"
	if d, ok := getenv("REPORT_DIR"); ok && d != "" {
		dir = d
	}
	if report == "" {
		report = filepath.Join(dir, "deployctl-report.json")
	}
	if metrics == "" {
		metrics = filepath.Join(filepath.Dir(report), "deployctl-metrics.prom")
	}
	return report, metrics
}
