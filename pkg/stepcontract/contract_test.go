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
	if _, err := Args(&SyncAndWait{App: "a", SyncTimeout: duration.Max, HealthTimeout: time.Second}); err == nil || !strings.Contains(err.Error(), InputDeadline) {
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
	got, err := Args(&Teardown{App: "db", Platform: "p", Confirm: FromWorkflow(WorkflowConfirm), PVPolicy: PolicyRetain,
		CRDPolicy: PolicyDelete, Timeout: time.Minute, Cascade: true, Retry: DefaultRetry})
	if err != nil {
		t.Fatal(err)
	}
	want := []Arg{{"app", "db"}, {"platform", "p"}, {"confirm", "{{workflow.parameters.confirm}}"}, {"crd-policy", "delete"},
		{"timeout", "1m0s"}, {InputDeadline, "180"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Args\n%v\nwant\n%v", got, want)
	}
	got, err = Args(&SyncAndWait{App: "a", SyncTimeout: time.Minute, HealthTimeout: time.Minute, AppNamespace: "team", Retry: Retry{Limit: 0, Backoff: time.Second, Factor: 2}})
	if err != nil {
		t.Fatal(err)
	}
	want = []Arg{{"app", "a"}, {"manifest-base64", ""}, {"sync-timeout", "1m0s"}, {"health-timeout", "1m0s"}, {InputDeadline, "240"},
		{InputAppNamespace, "team"}, {"retry-limit", "0"}, {"retry-backoff", "1s"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Args\n%v\nwant\n%v", got, want)
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
	if len(sync.Workflow) != n+1 || sync.Workflow[n].Name != WorkflowHealthCustomizations {
		t.Errorf("sync-and-wait's workflow parameters %v", sync.Workflow)
	}
	if len(WorkflowParams) != n || len(TemplateOf(&Validate{}).Workflow) != n {
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
