package deployctl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

func execute(args ...string) (string, error) {
	cmd := NewCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func wantUsage(t *testing.T, args []string, want string) {
	t.Helper()
	out, err := execute(args...)
	if exitcode.Of(err) != exitcode.Invalid || err.Error() != want || out != "" {
		t.Errorf("deployctl %s: exit %d, output %q, err:\n%v\nwant exit 3:\n%s", strings.Join(args, " "), exitcode.Of(err), out, err, want)
	}
}

// Missing and extra arguments, the exact text: exit 3 with the usage line.
func TestArgumentCountIsAUsageError(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"generate"}, "deployctl generate: accepts 1 arg(s), received 0\nusage: deployctl generate FILE [flags]\nrun 'deployctl generate --help' for more"},
		{[]string{"generate", "a.yaml", "b.yaml"}, "deployctl generate: accepts 1 arg(s), received 2\nusage: deployctl generate FILE [flags]\nrun 'deployctl generate --help' for more"},
		{[]string{"lint"}, "deployctl lint: requires at least 1 arg(s), only received 0\nusage: deployctl lint FILE... [flags]\nrun 'deployctl lint --help' for more"},
		{[]string{"plan"}, "deployctl plan: accepts 1 arg(s), received 0\nusage: deployctl plan FILE [flags]\nrun 'deployctl plan --help' for more"},
		{[]string{"import"}, "deployctl import: requires at least 1 arg(s), only received 0\nusage: deployctl import PATH... [flags]\nrun 'deployctl import --help' for more"},
		{[]string{"explain"}, "deployctl explain: accepts 1 arg(s), received 0\nusage: deployctl explain APP [flags]\nrun 'deployctl explain --help' for more"},
		{[]string{"status", "a", "b"}, "deployctl status: accepts at most 1 arg(s), received 2\nusage: deployctl status [WORKFLOW] [flags]\nrun 'deployctl status --help' for more"},
		{[]string{"deploy", "now"}, "deployctl deploy: unknown command \"now\" for \"deployctl deploy\"\nusage: deployctl deploy [flags]\nrun 'deployctl deploy --help' for more"},
		{[]string{"genrate", "x.yaml"}, "deployctl: unknown command \"genrate\" (did you mean generate?)\nusage: deployctl COMMAND [flags]\nrun 'deployctl --help' for more"},
		{[]string{"help", "nope"}, "deployctl help: unknown help topic \"nope\"\nusage: deployctl help [command] [flags]\nrun 'deployctl help --help' for more"},
		{[]string{"completion", "tcsh"}, "deployctl completion: unknown command \"tcsh\" for \"deployctl completion\"\nusage: deployctl completion COMMAND [flags]\nrun 'deployctl completion --help' for more"},
		{[]string{"completion", "bash", "extra"}, "deployctl completion bash: unknown command \"extra\" for \"deployctl completion bash\"\nusage: deployctl completion bash\nrun 'deployctl completion bash --help' for more"},
		{nil, "deployctl: missing command: one of completion, deploy, explain, generate, import, lint, plan, preflight, status, teardown, validate\nusage: deployctl COMMAND [flags]\nrun 'deployctl --help' for more"},
	} {
		wantUsage(t, c.args, c.want)
	}
}

// Every command, an unknown flag and a bad flag value: exit 3 with the usage line.
func TestFlagErrorsAreUsageErrors(t *testing.T) {
	for _, c := range NewCommand().Commands() {
		name := c.Name()
		out, err := execute(name, "--no-such-flag")
		want := "deployctl " + name + ": unknown flag: --no-such-flag\nusage: deployctl " + name + " "
		if exitcode.Of(err) != exitcode.Invalid || !strings.HasPrefix(err.Error(), want) || out != "" {
			t.Errorf("%s: exit %d, output %q, err:\n%v\nwant exit 3:\n%s…", name, exitcode.Of(err), out, err, want)
		}
	}
	wantUsage(t, []string{"--no-such-flag"}, "deployctl: unknown flag: --no-such-flag\nusage: deployctl COMMAND [flags]\nrun 'deployctl --help' for more")
	wantUsage(t, []string{"plan", "x.yaml", "--compare-waves=maybe"}, "deployctl plan: invalid argument \"maybe\" for \"--compare-waves\" flag: strconv.ParseBool: parsing \"maybe\": invalid syntax\nusage: deployctl plan FILE [flags]\nrun 'deployctl plan --help' for more")
}

func TestHelpIsNoError(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"help", "generate"}, {"generate", "--help"}} {
		if out, err := execute(args...); err != nil || !strings.Contains(out, "Usage:") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
}
