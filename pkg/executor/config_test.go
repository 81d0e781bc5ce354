package executor

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/exitcode"
)

const sentinel = "SENTINEL-TOKEN-must-never-be-printed"

// baseEnv is a valid configuration of the minimal platform.
func baseEnv(t *testing.T) map[string]string {
	t.Helper()
	return map[string]string{
		"KUBECONFIG_PATH": "testdata/kubeconfig",
		"ENVIRONMENT":     "staging",
		"CONFIG_DIR":      "testdata/config",
		"SECRETS_DIR":     t.TempDir(),
		"REPORT_DIR":      t.TempDir(),
	}
}

// options are an action's options with the flags given on the command
// line (flag name → value; the command line's parsing is
// pkg/cmd/deployctl/internal/action's).
func options(t *testing.T, action Action, flags ...string) *Options {
	t.Helper()
	o := &Options{Action: action, Flags: map[string]string{}}
	for i := 0; i+1 < len(flags); i += 2 {
		o.Flags[flags[i]] = flags[i+1]
	}
	return o
}

func load(t *testing.T, action Action, env map[string]string, flags ...string) (*Config, error) {
	t.Helper()
	return options(t, action, flags...).Load(lookup(env))
}

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// configDir writes a config directory: environment.yaml and dag.yaml
// (the minimal platform's unless given).
func configDir(t *testing.T, environment, spec string) string {
	t.Helper()
	dir := t.TempDir()
	if spec == "" {
		b, err := os.ReadFile("testdata/config/dag.yaml")
		if err != nil {
			t.Fatal(err)
		}
		spec = string(b)
	}
	for name, body := range map[string]string{EnvironmentFileName: environment, SpecFileName: spec} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		t.Fatal("want an invalid configuration, got none")
	}
	if got := exitcode.Of(err); got != exitcode.Invalid {
		t.Fatalf("exit code %d, want 3: %v", got, err)
	}
	return err.(*exitcode.Error).Err.(*Invalid).Problems
}

// wantAll checks that every expected fragment is in exactly one problem
// and that there is no problem nobody expected.
func wantAll(t *testing.T, problems []string, want ...string) {
	t.Helper()
	used := make([]bool, len(problems))
	for _, w := range want {
		found := false
		for i, p := range problems {
			if strings.Contains(p, w) {
				found, used[i] = true, true
			}
		}
		if !found {
			t.Errorf("no problem mentions %q", w)
		}
	}
	for i, p := range problems {
		if !used[i] {
			t.Errorf("unexpected problem: %s", p)
		}
	}
}

func TestLoadValid(t *testing.T) {
	env := baseEnv(t)
	c, err := load(t, ActionDeploy, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.Platform() != "minimal" || c.Scope != "platform" || c.Environment != "staging" || c.DryRun || c.Timeout != 0 {
		t.Errorf("unexpected config: %+v", c)
	}
	if c.Cluster != "staging-cluster" || c.Context != "ci@staging" || c.KubeconfigSource != "testdata/kubeconfig" {
		t.Errorf("kubeconfig: cluster %q context %q source %q", c.Cluster, c.Context, c.KubeconfigSource)
	}
	if want := filepath.Join(env["REPORT_DIR"], "deployctl-report.json"); c.ReportFile != want {
		t.Errorf("report %s, want %s", c.ReportFile, want)
	}
	if want := filepath.Join(env["REPORT_DIR"], "deployctl-metrics.prom"); c.MetricsFile != want {
		t.Errorf("metrics %s, want %s", c.MetricsFile, want)
	}
	if len(c.Overrides) != 0 {
		t.Errorf("no override expected: %v", c.Overrides)
	}
}

func TestLoadListsEveryProblem(t *testing.T) {
	dir := configDir(t, `name: staging
gitRepository: https://git.example.com/platform.git
gitRevision: main
timeouts: {sync: 5 minutes, health: 3m, extra: 1}
retries: {maxAttempts: many}
colour: blue
`, "")
	env := map[string]string{
		"KUBECONFIG_PATH": "testdata/kubeconfig",
		"KUBECONFIG_DATA": base64.StdEncoding.EncodeToString([]byte("x")),
		"ENVIRONMENT":     "production",
		"TARGET_SCOPE":    "app:nope",
		"DRY_RUN":         "maybe",
		"LOG_LEVEL":       "loud",
		"LOG_FORMAT":      "xml",
		"TIMEOUT":         "-1s",
		"METRICS_ADDR":    ":99999",
		"TRACE_ID":        "a b",
		"CONFIG_DIR":      dir,
		"SECRETS_DIR":     filepath.Join(dir, "missing"),
	}
	_, err := load(t, ActionDeploy, env)
	wantAll(t, problemsOf(t, err),
		"KUBECONFIG_DATA and KUBECONFIG_PATH are both set",
		`ENVIRONMENT / --environment is "production" but`,
		`TARGET_SCOPE / --scope: invalid scope "app:nope"`,
		`DRY_RUN / --dry-run: "maybe"`,
		`LOG_LEVEL / --log-level: "loud"`,
		`LOG_FORMAT / --log-format: "xml"`,
		`TIMEOUT / --timeout: "-1s"`,
		`METRICS_ADDR / --metrics-addr: ":99999"`,
		`TRACE_ID / --trace-id: "a b"`,
		`SECRETS_DIR / --secrets-dir`,
		`line 4: invalid duration "5 minutes"`,
		`line 4: unknown field "extra"`,
		`line 5: "many" is not a valid int`,
		`line 6: unknown field "colour"`,
		"domain is required",
	)
}

func TestLoadListsEverySpecError(t *testing.T) {
	dir := configDir(t, "name: staging\ndomain: d\ngitRepository: https://git.example.com/p.git\ngitRevision: main\n", `apiVersion: deployctl.dev/v1alpha1
kind: Platform
metadata: {name: broken}
spec:
  argocd: {namespace: argocd, server: argocd-server.argocd.svc:443}
  workflow: {namespace: argo, serviceAccount: deployctl, image: x/y:z}
  stacks:
  - name: base
    apps:
    - name: a
      dependsOn: [ghost]
      source: {repoURL: https://g, path: a}
    - name: b
      dependsOn: [phantom]
      source: {repoURL: https://g, path: b}
`)
	env := baseEnv(t)
	env["CONFIG_DIR"] = dir
	_, err := load(t, ActionValidate, env)
	wantAll(t, problemsOf(t, err), "ghost", "phantom")
}

// A spec with a missing field still has its graph checked: the cycle is
// listed with the other problems, as lint lists it.
func TestLoadListsCycleWithSpecErrors(t *testing.T) {
	dir := configDir(t, "name: staging\ndomain: d\ngitRepository: https://git.example.com/p.git\ngitRevision: main\n", `apiVersion: deployctl.dev/v1alpha1
kind: Platform
metadata: {name: broken}
spec:
  stacks:
  - name: base
    apps:
    - name: a
      dependsOn: [b]
      source: {repoURL: https://g, path: a}
    - name: b
      dependsOn: [a]
      source: {repoURL: https://g, path: b}
`)
	env := baseEnv(t)
	env["CONFIG_DIR"] = dir
	_, err := load(t, ActionValidate, env)
	wantAll(t, problemsOf(t, err), `missing required field "workflow"`, "a → b → a")
}

func TestFlagsOverrideEnvironment(t *testing.T) {
	env := baseEnv(t)
	env["ENVIRONMENT"] = "production"
	env["TARGET_SCOPE"] = "app:nope"
	env["DRY_RUN"] = "false"
	c, err := load(t, ActionDeploy, env, "environment", "staging", "scope", "app:web", "dry-run", "true", "timeout", "90s")
	if err != nil {
		t.Fatal(err)
	}
	if c.Environment != "staging" || c.Scope != "app:web" || !c.DryRun || c.Timeout != 90*time.Second {
		t.Errorf("flags did not win: env %q scope %q dry %v timeout %s", c.Environment, c.Scope, c.DryRun, c.Timeout)
	}
}

func TestKubeconfigData(t *testing.T) {
	raw, err := os.ReadFile("testdata/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	env := baseEnv(t)
	delete(env, "KUBECONFIG_PATH")
	env["KUBECONFIG_DATA"] = base64.StdEncoding.EncodeToString(raw)
	c, err := load(t, ActionValidate, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.KubeconfigSource != "KUBECONFIG_DATA" || c.Cluster != "staging-cluster" {
		t.Errorf("source %q cluster %q", c.KubeconfigSource, c.Cluster)
	}

	for name, data := range map[string]string{
		"not base64":     "%%%" + sentinel,
		"not kubeconfig": base64.StdEncoding.EncodeToString([]byte("users: [" + sentinel)),
	} {
		env["KUBECONFIG_DATA"] = data
		_, err := load(t, ActionValidate, env)
		ps := problemsOf(t, err)
		if len(ps) != 1 || !strings.HasPrefix(ps[0], "KUBECONFIG_DATA") {
			t.Errorf("%s: %v", name, ps)
		}
		if strings.Contains(err.Error(), "SENTINEL") {
			t.Errorf("%s: the error quotes the kubeconfig: %v", name, err)
		}
	}
	delete(env, "KUBECONFIG_DATA")
	_, err = load(t, ActionValidate, env)
	wantAll(t, problemsOf(t, err), "KUBECONFIG_PATH (or --kubeconfig) or KUBECONFIG_DATA: one is required")
}

func TestClusterNameGuard(t *testing.T) {
	env := baseEnv(t)
	env["CONFIG_DIR"] = configDir(t, "name: staging\ndomain: d\ngitRepository: https://git.example.com/p.git\ngitRevision: main\nclusterName: production-cluster\n", "")
	_, err := load(t, ActionDeploy, env)
	wantAll(t, problemsOf(t, err), `clusterName is "production-cluster" but the kubeconfig's current context "ci@staging" points at cluster "staging-cluster"`)
}

func TestTeardownConfirmation(t *testing.T) {
	env := baseEnv(t)
	_, err := load(t, ActionTeardown, env)
	wantAll(t, problemsOf(t, err), "CONFIRM / --confirm: required for teardown: set it to the platform's name (minimal)")
	env["CONFIRM"] = "minimall"
	env["PV_POLICY"], env["CRD_POLICY"] = "shred", "orphan"
	_, err = load(t, ActionTeardown, env)
	wantAll(t, problemsOf(t, err), `"minimall" does not match the platform's name "minimal"`, `PV_POLICY / --pv-policy: "shred"`,
		`CRD_POLICY / --crd-policy: "orphan"`)
	env["CONFIRM"], env["PV_POLICY"], env["CRD_POLICY"] = "minimal", "delete", "delete"
	c, err := load(t, ActionTeardown, env)
	if err != nil || c.PVPolicy != "delete" || c.CRDPolicy != "delete" {
		t.Fatalf("confirmed teardown: %v (pv %q, crd %q)", err, c.PVPolicy, c.CRDPolicy)
	}
	delete(env, "CRD_POLICY")
	if c, err = load(t, ActionTeardown, env); err != nil {
		t.Fatal(err)
	}
	if c.CRDPolicy != "retain" {
		t.Fatalf("crd-policy default %q, want retain", c.CRDPolicy)
	}
	// Only teardown reads CONFIRM.
	env["CONFIRM"] = "whatever"
	if _, err := load(t, ActionDeploy, env); err != nil {
		t.Errorf("deploy must ignore CONFIRM: %v", err)
	}
}

func TestEnvironmentOverridesTheSpec(t *testing.T) {
	env := baseEnv(t)
	plain, err := load(t, ActionDeploy, env)
	if err != nil {
		t.Fatal(err)
	}
	env["CONFIG_DIR"] = configDir(t, `name: staging
domain: staging.example.com
gitRepository: https://git.example.com/platform.git
gitRevision: main
argocdNamespace: cd
workflowsNamespace: wf
timeouts: {sync: 7m}
retries: {maxAttempts: 5, backoff: 3s}
`, "")
	c, err := load(t, ActionDeploy, env)
	if err != nil {
		t.Fatal(err)
	}
	p := c.DAG.Platform
	if p.Spec.ArgoCD.Namespace != "cd" || p.Spec.ArgoCD.Server != "argocd-server.cd.svc:443" || p.Spec.Workflow.Namespace != "wf" {
		t.Errorf("namespaces: argocd %s (%s), workflow %s", p.Spec.ArgoCD.Namespace, p.Spec.ArgoCD.Server, p.Spec.Workflow.Namespace)
	}
	for _, s := range p.Spec.Stacks {
		for _, a := range s.Apps {
			wantSync, wantHealth := 7*time.Minute, 5*time.Minute
			if a.Name == "database" { // sets its own timeouts: kept
				wantSync, wantHealth = 10*time.Minute, 15*time.Minute
			}
			if a.Timeouts.Sync.Duration != wantSync || a.Timeouts.Health.Duration != wantHealth {
				t.Errorf("%s timeouts %s/%s, want %s/%s", a.Name, a.Timeouts.Sync, a.Timeouts.Health, wantSync, wantHealth)
			}
			if a.Retry.Limit != 4 || a.Retry.Backoff.Duration != 3*time.Second {
				t.Errorf("%s retry %d/%s, want 4/3s", a.Name, a.Retry.Limit, a.Retry.Backoff)
			}
		}
	}
	if len(c.Overrides) != 6 {
		t.Errorf("overrides: %q", c.Overrides)
	}
	// The compiled objects follow, and the spec hash tells the runs apart.
	a, err := compile.Compile(plain.DAG, "platform")
	if err != nil {
		t.Fatal(err)
	}
	b, err := compile.Compile(c.DAG, "platform")
	if err != nil {
		t.Fatal(err)
	}
	if a.SpecHash == b.SpecHash {
		t.Error("environment overrides must change the spec hash")
	}
	if ns := b.WorkflowTemplates["deploy"].Namespace; ns != "wf" {
		t.Errorf("WorkflowTemplate in %s", ns)
	}
}

func TestSecretsDirectory(t *testing.T) {
	env := baseEnv(t)
	dir := env["SECRETS_DIR"]
	os.WriteFile(filepath.Join(dir, SecretArgoCDToken), []byte(sentinel+"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "unrelated"), []byte("x"), 0o600)
	c, err := load(t, ActionDeploy, env)
	if err != nil {
		t.Fatal(err)
	}
	if string(c.secrets[SecretArgoCDToken]) != sentinel+"\n" || len(c.secrets) != 1 {
		t.Errorf("secrets read: %v", len(c.secrets))
	}
	os.WriteFile(filepath.Join(dir, SecretWebhookToken), []byte("h00k\n"), 0o600)
	if c, err = load(t, ActionDeploy, env); err != nil || string(c.secrets[SecretWebhookToken]) != "h00k\n" || len(c.secrets) != 2 {
		t.Errorf("the webhook token is not read: %v, %d secrets", err, len(c.secrets))
	}
	// A token no Authorization header can carry as written is refused,
	// both at once, without its text.
	os.WriteFile(filepath.Join(dir, SecretWebhookToken), []byte("h00k tok3n\n"), 0o600)
	os.WriteFile(filepath.Join(dir, SecretArgoCDToken), []byte(sentinel+"\nsecond-line\n"), 0o600)
	_, err = load(t, ActionDeploy, env)
	problems := problemsOf(t, err)
	wantAll(t, problems, "webhook-token: not a bearer token (RFC 6750", SecretArgoCDToken+": not a bearer token (RFC 6750")
	if j := strings.Join(problems, "\n"); strings.Contains(j, "tok3n") || strings.Contains(j, sentinel) || strings.Contains(j, "second-line") {
		t.Errorf("the problems show a token: %s", j)
	}
	os.WriteFile(filepath.Join(dir, SecretWebhookToken), []byte("h00k\n"), 0o600)
	os.WriteFile(filepath.Join(dir, SecretArgoCDToken), []byte(sentinel+"\n"), 0o600)

	os.WriteFile(filepath.Join(dir, SecretArgoCDCA), []byte("pem"), 0o600)
	_, err = load(t, ActionDeploy, env)
	wantAll(t, problemsOf(t, err), "argocd-ca.crt: present, but the spec names no argocd.caSecret")

	// The default /secrets may be absent; a named directory may not.
	env["SECRETS_DIR"] = filepath.Join(dir, "nope")
	_, err = load(t, ActionDeploy, env)
	wantAll(t, problemsOf(t, err), "SECRETS_DIR / --secrets-dir")
}

// A run that fails on its configuration, and one that fails to reach the
// cluster, print and write nothing of the credentials.
func TestCredentialsNeverLeak(t *testing.T) {
	raw, err := os.ReadFile("testdata/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(map[string]string){
		"invalid config": func(env map[string]string) { env["ENVIRONMENT"] = "" },
		"unreachable":    func(map[string]string) {},
	} {
		t.Run(name, func(t *testing.T) {
			env := baseEnv(t)
			delete(env, "KUBECONFIG_PATH")
			env["KUBECONFIG_DATA"] = base64.StdEncoding.EncodeToString(raw)
			env["LOG_LEVEL"] = "debug"
			os.WriteFile(filepath.Join(env["SECRETS_DIR"], SecretArgoCDToken), []byte(sentinel), 0o600)
			mutate(env)
			var stdout, stderr bytes.Buffer
			err := execute(context.Background(), options(t, ActionDeploy), lookup(env), &stdout, &stderr)
			if exitcode.Of(err) == exitcode.OK {
				t.Fatal("want a failure")
			}
			report, _ := os.ReadFile(filepath.Join(env["REPORT_DIR"], "deployctl-report.json"))
			metrics, _ := os.ReadFile(filepath.Join(env["REPORT_DIR"], "deployctl-metrics.prom"))
			if len(report) == 0 || len(metrics) == 0 {
				t.Fatal("report or metrics not written")
			}
			for what, b := range map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes(), "report": report, "metrics": metrics, "error": []byte(err.Error())} {
				if bytes.Contains(b, []byte("SENTINEL")) {
					t.Errorf("%s holds the credential", what)
				}
			}
		})
	}
}

// A --timeout past Go's range is refused as one (exit 3), not read as a
// wrapped, already passed deadline.
func TestTimeoutOverflowRefused(t *testing.T) {
	dir := configDir(t, "name: staging\ndomain: d\ngitRepository: https://git.example.com/p.git\ngitRevision: main\n", "")
	env := map[string]string{"KUBECONFIG_PATH": "testdata/kubeconfig", "CONFIG_DIR": dir, "ENVIRONMENT": "staging", "TIMEOUT": "3000000h"}
	_, err := load(t, ActionDeploy, env)
	if exitcode.Of(err) != exitcode.Invalid {
		t.Fatalf("exit %d: %v", exitcode.Of(err), err)
	}
	wantAll(t, problemsOf(t, err), `TIMEOUT / --timeout: "3000000h" is longer than the longest duration there is`)
}

// environment.yaml's timeouts and retries are a layer of the spec's
// loading: they meet the spec's own limits, located at environment.yaml's
// line and field (they were once applied after the rules, unchecked).
func TestEnvironmentOverridesMeetTheSpecRules(t *testing.T) {
	const head = `name: staging
domain: staging.example.com
gitRepository: https://git.example.com/platform.git
gitRevision: main
`
	for name, c := range map[string]struct {
		environment string
		want        []string // each after "environment.yaml:"
	}{
		"past the limits": {"timeouts:\n  sync: 900h\n  health: 900h\nretries:\n  maxAttempts: 50\n", []string{
			"6: timeouts.sync (spec.defaults.timeouts.sync): 900h0m0s is longer than the maximum 168h0m0s per timeout",
			"7: timeouts.health (spec.defaults.timeouts.health): 900h0m0s is longer than the maximum 168h0m0s per timeout",
			"9: retries.maxAttempts (spec.defaults.retry.limit): must be <= 20",
		}},
		"backoff past maxBackoff": {"retries:\n  maxAttempts: 5\n  backoff: 30m\n", []string{
			"6: retries.maxAttempts (spec.defaults.retry): retry backoff grows past maxBackoff 5m0s (limit 4, backoff 30m0s",
		}},
	} {
		t.Run(name, func(t *testing.T) {
			env := baseEnv(t)
			env["CONFIG_DIR"] = configDir(t, head+c.environment, "")
			_, err := load(t, ActionDeploy, env)
			problems := problemsOf(t, err)
			envFile := filepath.Join(env["CONFIG_DIR"], EnvironmentFileName)
			want := make([]string, len(c.want))
			for i, w := range c.want {
				want[i] = envFile + ":" + w
			}
			wantAll(t, problems, want...)
		})
	}
}
