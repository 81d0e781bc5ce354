package explain

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"

	"github.com/deployctl/deployctl/pkg/cmd/deployctl/status"
	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/livestate/livestatetest"
)

// fakeCluster serves the failed run of examples/minimal.yaml (from
// pkg/insight's fixtures) through the executor's client constructor, and
// returns a kubeconfig for --kubeconfig.
func fakeCluster(t *testing.T) string {
	t.Helper()
	d, err := dag.Load("../../../../examples/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := compile.Compile(d, "platform")
	if err != nil {
		t.Fatal(err)
	}
	wf := livestatetest.FailedDeploy(t)
	prev := kube.NewClients
	t.Cleanup(func() { kube.NewClients = prev })
	kube.NewClients = func(rc *rest.Config) (*kube.Clients, error) {
		if rc.Host != "https://192.0.2.1:6443" {
			t.Errorf("client config for %s", rc.Host)
		}
		dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
			map[schema.GroupVersionResource]string{{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}: "ApplicationList"})
		return &kube.Clients{Workflows: wffake.NewSimpleClientset(wf, out.WorkflowTemplates[dag.Deploy]), Dynamic: dyn}, nil
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	err = os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://192.0.2.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

func run(cmd *cobra.Command, args ...string) (string, error) {
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestExplainAndStatusCommands(t *testing.T) {
	kc := fakeCluster(t)
	out, err := run(NewCommand(), "web", "--kubeconfig", kc, "--spec", "../../../../examples/minimal.yaml")
	if err != nil {
		t.Fatal(err, out)
	}
	if !strings.Contains(out, "web was never deployed: database failed, and it depends on it\n") {
		t.Errorf("explain web:\n%s", out)
	}
	out, err = run(status.NewCommand(), "minimal-deploy-x1", "--kubeconfig", kc, "-n", "argo", "-o", "json")
	if err != nil || !strings.Contains(out, `"state": "omitted"`) || !strings.Contains(out, `"blockedBy": [`) {
		t.Errorf("status: %v\n%s", err, out)
	}
	if _, err := run(NewCommand(), "nothing", "--kubeconfig", kc); exitcode.Of(err) != exitcode.Invalid || !strings.Contains(err.Error(), "nothing is not an app") {
		t.Errorf("unknown app: %v", err)
	}
	for _, c := range []*cobra.Command{NewCommand(), status.NewCommand()} {
		args := []string{"--kubeconfig", kc, "-o", "yaml"}
		if c.Name() == "explain" {
			args = append([]string{"web"}, args...)
		}
		if _, err := run(c, args...); exitcode.Of(err) != exitcode.Invalid {
			t.Errorf("%s -o yaml: %v", c.Name(), err)
		}
	}
}
