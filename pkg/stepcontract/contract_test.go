package stepcontract

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deployctl/deployctl/internal/duration"
)

// The limits: a node's step may take its sync plus health timeout; Argo's
// hard limit of an attempt adds two minutes; an overflow is an error, not
// a deadline that has already passed.
func TestLimits(t *testing.T) {
	s := &SyncAndWait{SyncTimeout: 7 * time.Minute, HealthTimeout: 11*time.Minute + 30*time.Second}
	if got, err := s.Limit(); err != nil || got != 18*time.Minute+30*time.Second {
		t.Errorf("Limit %v, %v", got, err)
	}
	if got, err := s.Deadline(); err != nil || got != 20*time.Minute+30*time.Second {
		t.Errorf("Deadline %v, %v", got, err)
	}
	td := &Teardown{Timeout: 25 * time.Minute}
	if got, err := td.Deadline(); err != nil || got != 27*time.Minute {
		t.Errorf("teardown Deadline %v, %v", got, err)
	}
	if _, err := AttemptDeadline(duration.Max-time.Minute, 0); err == nil {
		t.Error("an overflowing deadline was accepted")
	}
	if _, err := (&SyncAndWait{SyncTimeout: duration.Max, HealthTimeout: 1}).Limit(); err == nil {
		t.Error("an overflowing limit was accepted")
	}
	if _, err := Args(&SyncAndWait{App: "a", SyncTimeout: duration.Max, HealthTimeout: time.Second}, nil); err == nil || !strings.Contains(err.Error(), InputDeadline) {
		t.Errorf("Args with an overflowing deadline: %v", err)
	}
	if got := Seconds(90*time.Second + 600*time.Millisecond); got != "91" {
		t.Errorf("Seconds %s", got)
	}
}

// A task passes what it sets: an argument equal to the input's default is
// left out, a zero app-namespace too (the default stands for it); a
// required input is passed even when empty.
func TestArgs(t *testing.T) {
	retry := map[string]string{WorkflowDefaultRetryLimit: "3", WorkflowDefaultRetryBackoff: "10s", WorkflowDefaultRetryFactor: "2"}
	got, err := Args(&Teardown{App: "db", Platform: "p", Confirm: FromWorkflow(WorkflowConfirm), PVPolicy: PolicyRetain,
		CRDPolicy: FromWorkflow(WorkflowCRDPolicy), Timeout: time.Minute, Cascade: true, Retry: DefaultRetry}, retry)
	if err != nil {
		t.Fatal(err)
	}
	want := []Arg{{"app", "db"}, {"platform", "p"}, {"pv-policy", "retain"}, {"timeout", "1m0s"}, {InputDeadline, "180"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Args\n%v\nwant\n%v", got, want)
	}
	got, err = Args(&SyncAndWait{App: "a", SyncTimeout: time.Minute, HealthTimeout: time.Minute, AppNamespace: "team", Retry: Retry{Limit: 0, Backoff: time.Second, Factor: 2}}, retry)
	if err != nil {
		t.Fatal(err)
	}
	want = []Arg{{"app", "a"}, {"manifest-base64", ""}, {"sync-timeout", "1m0s"}, {"health-timeout", "1m0s"}, {InputDeadline, "240"},
		{InputAppNamespace, "team"}, {"retry-limit", "0"}, {"retry-backoff", "1s"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Args\n%v\nwant\n%v", got, want)
	}
}

// The platform's defaults (issue 24): the WorkflowTemplate defines them
// as workflow parameters (PlatformArgs), the template's inputs default to
// them, and a task passes a value only where it differs: an app equal to
// the defaults passes none, one with its own sync timeout passes that and
// the deadline it changes, not the health timeout. Only the rules that
// say Platform are left out by value: a policy a task sets to retain
// keeps it, though the workflow's pv-policy is retain too (a submission
// may choose delete).
func TestPlatformDefaults(t *testing.T) {
	plat, err := PlatformArgs(&SyncAndWait{SyncTimeout: 5 * time.Minute, HealthTimeout: 10 * time.Minute, Retry: Retry{Limit: 5, Backoff: time.Second, Factor: 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Arg{{WorkflowDefaultSyncTimeout, "5m0s"}, {WorkflowDefaultHealthTimeout, "10m0s"}, {WorkflowDefaultDeadline, "1020"},
		{WorkflowDefaultRetryLimit, "5"}, {WorkflowDefaultRetryBackoff, "1s"}, {WorkflowDefaultRetryFactor, "1"}}
	if !reflect.DeepEqual(plat, want) {
		t.Fatalf("PlatformArgs\n%v\nwant\n%v", plat, want)
	}
	wf := map[string]string{WorkflowArgoCDNamespace: "argocd"}
	for _, a := range plat {
		wf[a.Name] = a.Value
	}
	same := &SyncAndWait{App: "a", ManifestBase64: "e30=", SyncTimeout: 5 * time.Minute, HealthTimeout: 10 * time.Minute, Retry: Retry{Limit: 5, Backoff: time.Second, Factor: 1}}
	if got, err := Args(same, wf); err != nil || !reflect.DeepEqual(got, []Arg{{"app", "a"}, {"manifest-base64", "e30="}}) {
		t.Errorf("an app with the platform's defaults passes %v, %v", got, err)
	}
	own := *same
	own.SyncTimeout, own.Retry.Limit = time.Minute, 3
	if got, err := Args(&own, wf); err != nil || !reflect.DeepEqual(got, []Arg{{"app", "a"}, {"manifest-base64", "e30="},
		{"sync-timeout", "1m0s"}, {InputDeadline, "780"}, {"retry-limit", "3"}}) {
		t.Errorf("an app with its own sync timeout passes %v, %v", got, err)
	}
	// Without the workflow's values nothing is left out by value.
	if got, _ := Args(same, nil); len(got) != 8 {
		t.Errorf("without the workflow parameters: %v", got)
	}

	tp, err := PlatformArgs(&Teardown{Platform: "shop", Timeout: 10 * time.Minute, Retry: DefaultRetry})
	if err != nil {
		t.Fatal(err)
	}
	want = []Arg{{WorkflowPlatform, "shop"}, {WorkflowDefaultTimeout, "10m0s"}, {WorkflowDefaultDeadline, "720"},
		{WorkflowDefaultRetryLimit, "3"}, {WorkflowDefaultRetryBackoff, "10s"}, {WorkflowDefaultRetryFactor, "2"}}
	if !reflect.DeepEqual(tp, want) {
		t.Fatalf("PlatformArgs\n%v\nwant\n%v", tp, want)
	}
	wf = map[string]string{WorkflowPVPolicy: PolicyRetain}
	for _, a := range tp {
		wf[a.Name] = a.Value
	}
	td := &Teardown{App: "db", Platform: "shop", Confirm: FromWorkflow(WorkflowConfirm), PVPolicy: FromWorkflow(WorkflowPVPolicy),
		CRDPolicy: FromWorkflow(WorkflowCRDPolicy), Timeout: 10 * time.Minute, Cascade: true, Retry: DefaultRetry}
	if got, err := Args(td, wf); err != nil || !reflect.DeepEqual(got, []Arg{{"app", "db"}}) {
		t.Errorf("a teardown task with the platform's defaults passes %v, %v", got, err)
	}
	td.PVPolicy, td.Platform = PolicyRetain, "other"
	if got, err := Args(td, wf); err != nil || !reflect.DeepEqual(got, []Arg{{"app", "db"}, {"platform", "other"}, {"pv-policy", "retain"}}) {
		t.Errorf("a teardown task with its own policy and platform passes %v, %v", got, err)
	}

	// The templates list the workflow parameters their inputs default to,
	// with deploystep's defaults, so that they validate alone.
	defaults := map[string]string{}
	for _, w := range TemplateOf(&Teardown{}).Workflow {
		defaults[w.Name] = w.Default
	}
	for name, v := range map[string]string{WorkflowPlatform: "", WorkflowConfirm: "", WorkflowPVPolicy: PolicyRetain, WorkflowCRDPolicy: PolicyRetain,
		WorkflowDefaultTimeout: "10m0s", WorkflowDefaultDeadline: "720", WorkflowArgoCDNamespace: "argocd",
		WorkflowDefaultRetryLimit: "3", WorkflowDefaultRetryBackoff: "10s", WorkflowDefaultRetryFactor: "2"} {
		if got, ok := defaults[name]; !ok || got != v {
			t.Errorf("teardown's template: workflow parameter %s = %q (listed %v), want %q", name, got, ok, v)
		}
	}
}

// Every rule is one a rendering can carry: an input or a source for what
// the template hands over, a flag for what deploystep reads, unique names.
func TestRulesAreWellFormed(t *testing.T) {
	for _, c := range Commands() {
		inputs, flags := map[string]bool{}, map[string]bool{}
		for _, p := range c.Params() {
			if p.Input == "" && p.From == "" && p.Reader != StepOnly {
				t.Errorf("%s %s: a template cannot hand it over (no input, no source)", c.Command(), p.Name())
			}
			if p.Reader.Step() != (p.Flag != "") {
				t.Errorf("%s %s: deploystep reads it, or has a flag for it, not both", c.Command(), p.Name())
			}
			if p.Input != "" && inputs[p.Input] || p.Flag != "" && flags[p.Flag] {
				t.Errorf("%s %s: declared twice", c.Command(), p.Name())
			}
			inputs[p.Input], flags[p.Flag] = true, true
			if p.Global && p.Reader != ByEnv {
				t.Errorf("%s %s: a connection flag reaches deploystep in its environment", c.Command(), p.Name())
			}
		}
	}
}

// TemplateOf adds a command's own workflow parameters to its own copy of
// the connection's.
func TestTemplateWorkflowParams(t *testing.T) {
	n := len(WorkflowParams)
	sync := TemplateOf(&SyncAndWait{})
	retry := []WorkflowParam{{WorkflowDefaultRetryLimit, "3"}, {WorkflowDefaultRetryBackoff, "10s"}, {WorkflowDefaultRetryFactor, "2"}}
	want := append([]WorkflowParam{{WorkflowDefaultSyncTimeout, "5m0s"}, {WorkflowDefaultHealthTimeout, "5m0s"}, {WorkflowDefaultDeadline, "720"},
		{WorkflowHealthCustomizations, ""}}, retry...)
	if len(sync.Workflow) != n+len(want) || !reflect.DeepEqual(sync.Workflow[n:], want) {
		t.Errorf("sync-and-wait's workflow parameters %v, want the connection's and %v", sync.Workflow, want)
	}
	if v := TemplateOf(&Validate{}).Workflow; len(WorkflowParams) != n || !reflect.DeepEqual(v[n:], retry) {
		t.Error("TemplateOf changed the connection's workflow parameters")
	}
	if got := sync.Call.Plugin().Env; len(got) != len(sync.Call.Env)-1 {
		t.Errorf("the plugin's call keeps %d of %d variables, want all but %s", len(got), len(sync.Call.Env), ResultEnv)
	}
}

// docTable is the parameter table of docs/step-contract.md, rendered from
// the rules.
func docTable() string {
	var b strings.Builder
	b.WriteString("| command | template input | deploystep flag [env] | input default | handed over as |\n|---|---|---|---|---|\n")
	code := func(s string) string { return "`" + s + "`" }
	for _, c := range Commands() {
		for _, p := range c.Params() {
			input := "—"
			switch {
			case p.Input != "":
				input = code(p.Input)
			case p.From != "":
				if name, ok := workflowParam(p.From); ok {
					input = "— (workflow parameter " + code(name) + ")"
				}
			}
			flag := "—"
			if p.Flag != "" {
				flag = code("--"+p.Flag) + " [" + code(p.EnvVar()) + "]"
			}
			def := ""
			switch {
			case p.Default != nil && *p.Default == "":
				def = "empty"
			case p.Default != nil:
				def = code(*p.Default)
			case p.Input != "":
				def = "required"
			}
			if len(p.Enum) > 0 {
				def += " (" + strings.Join(p.Enum, ", ") + ")"
			}
			how := map[Reader]string{
				ByArg: "command line", ByEnv: "environment", StepOnly: "never by a template",
				ArgoDeadline: "Argo's `activeDeadlineSeconds` (pod mode)", ArgoRetryLimit: "Argo's `retryStrategy.limit`",
				ArgoRetryBackoff: "Argo's `retryStrategy.backoff.duration`", ArgoRetryFactor: "Argo's `retryStrategy.backoff.factor`",
			}[p.Reader]
			if p.Global {
				how += " (a connection flag)"
			}
			b.WriteString("| " + code(c.Command()) + " | " + input + " | " + flag + " | " + def + " | " + how + " |\n")
		}
	}
	return b.String()
}

// docs/step-contract.md's parameter table is the rules', row for row, and
// its connection table names every connection flag with its variable.
func TestDocMatchesTheContract(t *testing.T) {
	raw, err := os.ReadFile("../../docs/step-contract.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	if want := docTable(); !strings.Contains(doc, want) {
		t.Errorf("docs/step-contract.md's parameter table is not the contract's; it should read:\n\n%s", want)
	}
	var c Connection
	for _, p := range c.Params() {
		row := "| `--" + p.Flag + "` | `" + p.EnvVar() + "` |"
		if !strings.Contains(doc, row) {
			t.Errorf("docs/step-contract.md has no connection row %s", row)
		}
	}
}

// deploystep links this package: standard library only, and the
// module's own standard-library-only duration helper.
func TestStandardLibraryOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(strings.Split(path, "/")[0], ".") && path != "github.com/deployctl/deployctl/internal/duration" {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
