package executor

import (
	"fmt"
	"sort"
	"strings"

	"github.com/deployctl/deployctl/pkg/report"
)

// Action is what the executor runs: the three of the contract, and
// preflight alone (package report's, whose reports say which).
type Action = report.Action

const (
	ActionDeploy    = report.ActionDeploy
	ActionValidate  = report.ActionValidate
	ActionTeardown  = report.ActionTeardown
	ActionPreflight = report.ActionPreflight
)

// setting is one configuration value: its flag, its environment variable
// and its default. A flag given on the command line wins over the variable,
// which wins over the default.
type setting struct {
	key   string // the flag name; also the key of Options.values
	env   string
	def   string
	usage string
	// envOnly: no flag. Only KUBECONFIG_DATA, a credential: a flag value
	// would show in the process list (/proc/PID/cmdline) of every user.
	envOnly bool
	boolean bool     // `--flag` alone means true
	only    []Action // the actions that take it; nil: all
}

// settings is the whole configuration surface (README "Executor").
var settings = []setting{
	{key: "kubeconfig", env: "KUBECONFIG_PATH", usage: "kubeconfig file (exactly one of KUBECONFIG_PATH / KUBECONFIG_DATA)"},
	{key: "kubeconfig-data", env: "KUBECONFIG_DATA", envOnly: true},
	{key: "environment", env: "ENVIRONMENT", usage: "environment name; must equal name: in environment.yaml (required)"},
	{key: "scope", env: "TARGET_SCOPE", def: "platform", usage: "platform, stack:NAME or app:NAME"},
	{key: "dry-run", env: "DRY_RUN", def: "false", boolean: true, usage: "preflight, compile and show what would be applied and run; change nothing"},
	{key: "log-level", env: "LOG_LEVEL", def: "info", usage: "debug, info, warn or error"},
	{key: "log-format", env: "LOG_FORMAT", def: "text", usage: "text or json"},
	{key: "trace-id", env: "TRACE_ID", usage: "trace id put on every log line and on the workflow"},
	{key: "span-id", env: "SPAN_ID", usage: "span id put on every log line"},
	{key: "config-dir", env: "CONFIG_DIR", def: "/config", usage: "directory holding environment.yaml and dag.yaml"},
	{key: "secrets-dir", env: "SECRETS_DIR", def: "/secrets", usage: "directory of credential files (argocd-token, argocd-ca.crt, webhook-token)"},
	{key: "timeout", env: "TIMEOUT", usage: "deadline of the whole action (default: the plan's worst case plus slack); exit 4 when exceeded"},
	{key: "report", env: "REPORT_FILE", usage: "status report JSON file (default $REPORT_DIR/deployctl-report.json, else /tmp/deployctl-report.json)"},
	{key: "metrics-file", env: "METRICS_FILE", usage: "Prometheus text file (default beside the report: deployctl-metrics.prom)"},
	{key: "metrics-addr", env: "METRICS_ADDR", usage: "serve /metrics while running on this address; a bare :PORT binds 127.0.0.1"},
	{key: "confirm", env: "CONFIRM", usage: "the platform's name: teardown deletes nothing without it", only: []Action{ActionTeardown}},
	{key: "pv-policy", env: "PV_POLICY", def: "retain", usage: "retain (keep PersistentVolumeClaims) or delete", only: []Action{ActionTeardown}},
	{key: "crd-policy", env: "CRD_POLICY", def: "retain", usage: "retain (keep the CustomResourceDefinitions Argo CD never deletes) or delete", only: []Action{ActionTeardown}},
	{key: "force-run", env: "FORCE_RUN", def: "false", boolean: true, usage: "run the deploy workflow even when the platform is up to date", only: []Action{ActionDeploy}},
	{key: "submit", env: "WORKFLOW_SUBMIT", def: SubmitReference, usage: "how a new run is submitted: reference (a workflowTemplateRef) or inline (the WorkflowTemplate's spec as the cluster serves it, which Argo stores once: platforms past about 800 apps; refused by a controller whose templateReferencing is Strict or Secure)", only: []Action{ActionDeploy, ActionTeardown}},
}

// Options are the raw values of one action's settings, before validation.
type Options struct {
	Action Action
	// Flags are the settings given on the command line, by flag name
	// (Setting.Key); each wins over its environment variable.
	Flags map[string]string
}

// Setting is one flag of an action, for the command line to register.
type Setting struct {
	Key, Env, Default, Usage string
	Boolean                  bool // `--flag` alone means true
}

// Flags are the settings an action takes as flags (all but
// KUBECONFIG_DATA), in the order of the configuration surface.
func Flags(action Action) []Setting {
	var out []Setting
	for _, s := range settings {
		if s.applies(action) && !s.envOnly {
			out = append(out, Setting{Key: s.key, Env: s.env, Default: s.def, Usage: s.usage, Boolean: s.boolean})
		}
	}
	return out
}

func (s setting) applies(a Action) bool {
	if s.only == nil {
		return true
	}
	for _, x := range s.only {
		if x == a {
			return true
		}
	}
	return false
}

// resolve returns every setting's value: the flag if given, else the
// environment variable if set, else the default; and where it came from.
func (o *Options) resolve(getenv func(string) (string, bool)) (map[string]string, map[string]string) {
	val, from := map[string]string{}, map[string]string{}
	for _, s := range settings {
		if !s.applies(o.Action) {
			continue
		}
		if v, ok := o.Flags[s.key]; ok && !s.envOnly {
			val[s.key], from[s.key] = v, "--"+s.key
			continue
		}
		if v, ok := getenv(s.env); ok && v != "" {
			val[s.key], from[s.key] = v, s.env
			continue
		}
		val[s.key], from[s.key] = s.def, "default"
	}
	return val, from
}

// name is how a setting is named in errors: "ENVIRONMENT / --environment".
func name(key string) string {
	for _, s := range settings {
		if s.key == key {
			if s.envOnly {
				return s.env
			}
			return s.env + " / --" + s.key
		}
	}
	return key
}

// EnvHelp lists the environment variables of an action, for --help.
func EnvHelp(a Action) string {
	var lines []string
	for _, s := range settings {
		if !s.applies(a) {
			continue
		}
		l := fmt.Sprintf("  %-16s", s.env)
		if s.envOnly {
			l += " base64 kubeconfig (environment only: never a flag, never logged)"
		} else {
			l += " --" + s.key
		}
		lines = append(lines, l)
	}
	sort.Strings(lines)
	return "Environment (a flag given on the command line wins):\n" + strings.Join(lines, "\n") +
		"\n  REPORT_DIR       directory of the default report and metrics files"
}
