package action

import (
	"maps"
	"testing"

	"github.com/spf13/pflag"

	"github.com/deployctl/deployctl/pkg/executor"
)

// Only the flags given reach the executor (a flag's default must not hide
// the environment variable); a boolean flag alone means true; a flag of
// another action is unknown.
func TestOptionsAreTheFlagsGiven(t *testing.T) {
	fs := pflag.NewFlagSet("deploy", pflag.ContinueOnError)
	register(executor.ActionDeploy, fs)
	if err := fs.Parse([]string{"--environment", "staging", "--scope=app:web", "--dry-run", "--timeout", "90s"}); err != nil {
		t.Fatal(err)
	}
	o := options(executor.ActionDeploy, fs)
	want := map[string]string{"environment": "staging", "scope": "app:web", "dry-run": "true", "timeout": "90s"}
	if o.Action != executor.ActionDeploy || !maps.Equal(o.Flags, want) {
		t.Errorf("options %+v, want %v", o, want)
	}
	if f := fs.Lookup("scope"); f == nil || f.DefValue != "platform" || f.Usage != "platform, stack:NAME or app:NAME [TARGET_SCOPE]" {
		t.Errorf("scope flag %+v", f)
	}
	for _, bad := range [][]string{{"--kubeconfig-data", "x"}, {"--confirm", "p"}} {
		fs := pflag.NewFlagSet("deploy", pflag.ContinueOnError)
		register(executor.ActionDeploy, fs)
		if err := fs.Parse(bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}
