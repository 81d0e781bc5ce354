package executor

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/exitcode"
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
)

// Config is a validated configuration: everything an action needs, read
// before the cluster is touched.
type Config struct {
	Action      Action
	Environment string
	Scope       string
	DryRun      bool
	ForceRun    bool
	LogLevel    string
	LogFormat   string
	TraceID     string
	SpanID      string
	Confirm     string
	PVPolicy    string
	CRDPolicy   string
	ConfigDir   string
	SecretsDir  string
	// Timeout is the action's deadline; 0 means "derive it from the plan".
	Timeout     time.Duration
	ReportFile  string
	MetricsFile string
	MetricsAddr string

	// Env is environment.yaml; Overrides says what it changed in the spec.
	Env       *EnvironmentFile
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
	c := &Config{Action: o.action, secrets: map[string][]byte{}}
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
	c.ConfigDir, c.SecretsDir = val["config-dir"], val["secrets-dir"]
	if v := val["timeout"]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			bad("timeout", "%q: want a positive duration such as 30m or 1h", v)
		}
		c.Timeout = d
	}
	c.ReportFile, c.MetricsFile = reportPaths(val["report"], val["metrics-file"], getenv)
	c.MetricsAddr = val["metrics-addr"]
	if c.MetricsAddr != "" {
		addr, err := metricsAddr(c.MetricsAddr)
		if err != nil {
			bad("metrics-addr", "%q: %v", c.MetricsAddr, err)
		}
		c.MetricsAddr = addr
	}
	if o.action == ActionTeardown {
		c.PVPolicy, c.CRDPolicy = val["pv-policy"], val["crd-policy"]
		for _, key := range []string{"pv-policy", "crd-policy"} {
			if v := val[key]; v != "retain" && v != "delete" {
				bad(key, "%q: want retain or delete", v)
			}
		}
		c.Confirm = val["confirm"]
	}

	problems = append(problems, c.loadKubeconfig(val, from)...)

	c.Environment = val["environment"]
	if c.Environment == "" {
		problems = append(problems, name("environment")+": required (the environment to act on)")
	}
	envPath := filepath.Join(c.ConfigDir, EnvironmentFileName)
	env, envProblems := readEnvironment(envPath)
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

	problems = append(problems, c.loadSpec(env)...)
	problems = append(problems, c.loadSecrets(from["secrets-dir"] != "default")...)

	if o.action == ActionTeardown && c.DAG != nil {
		switch p := c.Platform(); {
		case c.Confirm == "":
			problems = append(problems, fmt.Sprintf("%s: required for teardown: set it to the platform's name (%s) to confirm deleting it", name("confirm"), p))
		case c.Confirm != p:
			problems = append(problems, fmt.Sprintf("%s: %q does not match the platform's name %q: nothing is deleted without the exact name", name("confirm"), c.Confirm, p))
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
// (INV-3: no state outside the explicit configuration).
func (c *Config) loadKubeconfig(val, from map[string]string) []string {
	path, data := val["kubeconfig"], val["kubeconfig-data"]
	var raw []byte
	switch {
	case path == "" && data == "":
		return []string{"KUBECONFIG_PATH (or --kubeconfig) or KUBECONFIG_DATA: one is required"}
	case path != "" && data != "":
		return []string{fmt.Sprintf("KUBECONFIG_DATA and %s are both set: give exactly one", from["kubeconfig"])}
	case data != "":
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data))
		if err != nil {
			return []string{"KUBECONFIG_DATA: not valid base64 (want the kubeconfig file, base64-encoded)"}
		}
		raw, c.KubeconfigSource = b, "KUBECONFIG_DATA"
	default:
		b, err := os.ReadFile(path)
		if err != nil {
			return []string{fmt.Sprintf("%s: %s: %v", name("kubeconfig"), path, cleanPathError(err))}
		}
		raw, c.KubeconfigSource = b, path
	}
	kc, err := clientcmd.Load(raw)
	if err != nil {
		// Keep the position, never the quoted input: it may hold a token.
		return []string{fmt.Sprintf("%s: not a kubeconfig: %s", c.KubeconfigSource, redactErr(err))}
	}
	if c.KubeconfigSource != "KUBECONFIG_DATA" {
		// Relative certificate paths are relative to the file's folder.
		setOrigin(kc, c.KubeconfigSource)
		if err := clientcmd.ResolveLocalPaths(kc); err != nil {
			return []string{fmt.Sprintf("%s: %v", c.KubeconfigSource, err)}
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

// redactErr keeps a parse error's position and drops any quoted input.
func redactErr(err error) string {
	s := err.Error()
	if i := strings.IndexAny(s, "\"`'"); i > 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	return s
}

// loadSpec reads dag.yaml, applies environment.yaml's overrides and checks
// the scope.
func (c *Config) loadSpec(env *EnvironmentFile) []string {
	path := filepath.Join(c.ConfigDir, SpecFileName)
	data, err := os.ReadFile(path)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", path, cleanPathError(err))}
	}
	doc, err := spec.Load(path, data)
	if err == nil {
		c.DAG, err = dag.Build(doc)
	}
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
		notes, err := applyEnvironment(c.DAG, data, env)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", path, err))
		}
		c.Overrides = notes
	}
	if c.Scope == "" {
		c.Scope = "platform"
	}
	if _, err := c.DAG.Scope(c.Scope, dag.Deploy); err != nil {
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
		return []string{fmt.Sprintf("%s: %s: %v", name("secrets-dir"), c.SecretsDir, cleanPathError(err))}
	}
	var problems []string
	for _, e := range entries {
		n := e.Name()
		if n != SecretArgoCDToken && n != SecretArgoCDCA {
			continue
		}
		p := filepath.Join(c.SecretsDir, n)
		b, err := os.ReadFile(p)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", p, cleanPathError(err)))
		case len(strings.TrimSpace(string(b))) == 0:
			problems = append(problems, p+": empty")
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

// metricsAddr defaults the host to loopback: metrics are served to the
// world only when asked explicitly (0.0.0.0:PORT).
func metricsAddr(s string) (string, error) {
	if !strings.Contains(s, ":") {
		s = ":" + s
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("bad port %q", port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// setOrigin records the file every entry came from, which
// clientcmd.ResolveLocalPaths resolves relative paths against.
func setOrigin(kc *clientcmdapi.Config, file string) {
	for _, x := range kc.Clusters {
		x.LocationOfOrigin = file
	}
	for _, x := range kc.AuthInfos {
		x.LocationOfOrigin = file
	}
	for _, x := range kc.Contexts {
		x.LocationOfOrigin = file
	}
}
