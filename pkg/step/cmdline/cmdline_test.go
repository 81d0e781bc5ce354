package cmdline

import (
	"strings"
	"testing"
	"time"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/check"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

func mapEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestFlagsAndEnvironment(t *testing.T) {
	env := mapEnv(map[string]string{
		"ARGOCD_SERVER": "argocd-server.argocd.svc:443", "ARGOCD_INSECURE_SKIP_VERIFY": "true",
		"ARGOCD_APP_NAMESPACE": "argocd", "REQUEST_TIMEOUT": "10s", "SYNC_TIMEOUT": "30m",
		"CHECK":           "resource:ceph.rook.io/CephCluster/rook-ceph/rook-ceph\nhttp://x/healthz=200",
		"ALLOW_SUSPENDED": "1",
	})
	inv, err := Parse([]string{"--root-path", "/argo", "sync-and-wait", "--app", "ceph-cluster", "--health-timeout", "2m",
		"--check", "http:http://vault.vault.svc:8200/v1/sys/health?standbyok=true=200,429", "--server", "override:443"}, env)
	if err != nil {
		t.Fatal(err)
	}
	g, s := inv.Global, inv.Sync
	if g.Server != "override:443" || !g.InsecureSkipVerify || g.Plaintext || g.RootPath != "/argo" || g.AppNamespace != "argocd" ||
		g.RequestTimeout != 10*time.Second || g.TokenFile != "/var/run/secrets/argocd/token" || g.ResultFile != "/tmp/deploystep/result.json" {
		t.Errorf("globals %+v", g)
	}
	if s.App != "ceph-cluster" || s.SyncTimeout != 30*time.Minute || s.HealthTimeout != 2*time.Minute || !s.AllowSuspended {
		t.Errorf("sync %+v", s)
	}
	// The command line replaces the environment's list.
	if len(s.Checks) != 1 || !strings.HasPrefix(s.Checks[0], "http:http://vault") {
		t.Errorf("checks %v", s.Checks)
	}
	c, err := check.Parse(s.Checks[0])
	if err != nil {
		t.Fatal(err)
	}
	hc := c.(*check.HTTP)
	if hc.URL != "http://vault.vault.svc:8200/v1/sys/health?standbyok=true" || len(hc.Codes) != 2 || hc.Codes[1] != 429 {
		t.Errorf("http check %+v", hc)
	}
}

func TestInvalidInvocations(t *testing.T) {
	base := map[string]string{"ARGOCD_SERVER": "x:1"}
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, base, "no command"},
		{[]string{"deploy"}, base, "unknown command"},
		{[]string{"sync-and-wait"}, base, "--app is required"},
		{[]string{"sync-and-wait", "--app", "a"}, map[string]string{}, "--server"},
		{[]string{"sync-and-wait", "--app", "a", "--sync-timeout", "soon"}, base, "invalid value"},
		{[]string{"sync-and-wait", "--app", "a"}, map[string]string{"ARGOCD_SERVER": "x:1", "HEALTH_TIMEOUT": "5"}, "HEALTH_TIMEOUT"},
		{[]string{"sync-and-wait", "--app", "a", "--manifest", "f", "--manifest-base64", "e30="}, base, "not both"},
		{[]string{"sync-and-wait", "--app", "a", "--check", "resource:apps/Deployment/ns"}, base, "resource:GROUP/KIND/NAMESPACE/NAME"},
		{[]string{"sync-and-wait", "--app", "a", "--check", "http:http://x/y"}, base, "http:URL=CODES"},
		{[]string{"sync-and-wait", "--app", "a", "--check", "http:http://x/y=OK"}, base, "not an HTTP status code"},
		{[]string{"sync-and-wait", "--app", "a", "--check", "http:ftp://x/y=200"}, base, "http:// or https://"},
		{[]string{"sync-and-wait", "--app", "a", "--check", "tcp:x:80"}, base, "want resource:"},
		{[]string{"sync-and-wait", "--app", "a", "stray"}, base, "unexpected argument"},
		{[]string{"sync-and-wait", "--app", "a", "--sync-id", "0123abcd"}, base, "--sync-id"},
		{[]string{"sync-and-wait", "--app", "a", "--sync-id", "0123456789ABCDEF"}, base, "--sync-id"},
		{[]string{"sync-and-wait", "--app", "a"}, map[string]string{"ARGOCD_SERVER": "x:1", "SYNC_ID": "x0123456789abcdef"}, "SYNC_ID"},
		// Overflow is a configuration error (3), never a deadline that has
		// already passed (75, retried): alone, and in the node's deadline.
		{[]string{"sync-and-wait", "--app", "a", "--sync-timeout", "2562047h", "--health-timeout", "2562047h"}, base, "--sync-timeout plus --health-timeout: 2562047h0m0s + 2562047h0m0s is longer than the longest duration"},
		{[]string{"sync-and-wait", "--app", "a", "--sync-timeout", "3000000h"}, base, `invalid value "3000000h" for flag -sync-timeout: "3000000h" is longer than the longest duration`},
		{[]string{"sync-and-wait", "--app", "a"}, map[string]string{"ARGOCD_SERVER": "x:1", "HEALTH_TIMEOUT": "9999999999999h"}, `HEALTH_TIMEOUT="9999999999999h": "9999999999999h" is longer`},
		{[]string{"validate"}, base, "at least one --app"},
		{[]string{"teardown", "--app", "a", "--platform", "p"}, base, "--confirm must equal --platform"},
		{[]string{"teardown", "--app", "a", "--platform", "p", "--confirm", "p", "--pv-policy", "keep"}, base, "--pv-policy"},
		{[]string{"teardown", "--app", "a", "--platform", "p", "--confirm", "p", "--crd-policy", "keep"}, base, "--crd-policy"},
		{[]string{"teardown", "--app", "a", "--platform", "p", "--confirm", "p"}, map[string]string{"ARGOCD_SERVER": "x:1", "CRD_POLICY": "Delete"}, "--crd-policy"},
		{[]string{"teardown", "--app", "a/b", "--platform", "p", "--confirm", "p"}, base, "invalid application name"},
	}
	for _, c := range cases {
		_, err := Parse(c.args, mapEnv(c.env))
		if exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want exit 3 mentioning %q", c.args, err, c.want)
		}
	}
	if _, err := Parse([]string{"validate", "-h"}, mapEnv(base)); err != ErrHelp {
		t.Errorf("-h: %v", err)
	}
}

// The sync id from the flag or SYNC_ID, as the plugin passes it.
func TestSyncID(t *testing.T) {
	for _, env := range []map[string]string{{"SYNC_ID": "0123456789abcdef"}, {}} {
		env["ARGOCD_SERVER"] = "x:1"
		args := []string{"sync-and-wait", "--app", "a"}
		if _, ok := env["SYNC_ID"]; !ok {
			args = append(args, "--sync-id", "0123456789abcdef")
		}
		inv, err := Parse(args, mapEnv(env))
		if err != nil || inv.Sync.SyncID != "0123456789abcdef" {
			t.Errorf("%v %v: sync id %q, %v", args, env, inv.Sync.SyncID, err)
		}
	}
}

// Apps from the environment, newline-separated, as the templates pass them.
func TestValidateAppsFromEnv(t *testing.T) {
	inv, err := Parse([]string{"validate"}, mapEnv(map[string]string{"ARGOCD_SERVER": "x:1", "APP": "a\nb\n\n c \n"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(inv.Validate.Apps, ","); got != "a,b,c" {
		t.Fatalf("apps %q", got)
	}
}

// The usage text names every flag the step contract gives deploystep, and
// each connection flag's variable.
func TestUsageNamesEveryFlag(t *testing.T) {
	var conn stepcontract.Connection
	for _, p := range conn.Params() {
		if !strings.Contains(Usage, "--"+p.Flag+" ["+p.EnvVar()+"]") {
			t.Errorf("usage has no --%s [%s]", p.Flag, p.EnvVar())
		}
	}
	for _, c := range stepcontract.Commands() {
		for _, p := range c.Params() {
			if p.Flag != "" && !strings.Contains(Usage, "--"+p.Flag+" ") && !strings.Contains(Usage, "--"+p.Flag+"]") && !strings.Contains(Usage, "--"+p.Flag+"=") {
				t.Errorf("usage has no --%s (%s)", p.Flag, c.Command())
			}
		}
	}
}
