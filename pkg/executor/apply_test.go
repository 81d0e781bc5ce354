package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/executor/internal/apply"
	"github.com/deployctl/deployctl/pkg/report"
	"github.com/deployctl/deployctl/pkg/spec"
)

func compiled(t *testing.T, c *Config) *compile.Output {
	t.Helper()
	out, err := compile.Compile(c.DAG, c.Scope)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// deployObjects is what deploy applies for the test platform changed by
// edit, with the Argo CD token in the secrets directory.
func deployObjects(t *testing.T, edit func(*Config)) []apply.Object {
	t.Helper()
	env := baseEnv(t)
	os.WriteFile(filepath.Join(env["SECRETS_DIR"], SecretArgoCDToken), []byte(sentinel+"\n"), 0o600)
	c, err := load(t, ActionDeploy, env)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(c)
	}
	objs, err := objectsToApply(c, compiled(t, c))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// What deploy applies, in order: RBAC, the Argo CD partials (argocd-cm
// once, with the account and every health customization), the credentials
// found, the ClusterWorkflowTemplates, the ConfigMap of the deploy's
// Applications (its tasks read them), the three WorkflowTemplates.
func TestObjectsToApply(t *testing.T) {
	objs := deployObjects(t, nil)
	var got []string
	for _, o := range objs {
		got = append(got, o.String())
	}
	want := []string{
		"ServiceAccount argo/deployctl",
		"Role argo/deployctl-minimal",
		"RoleBinding argo/deployctl-minimal",
		"ConfigMap argocd/argocd-cm",
		"ConfigMap argocd/argocd-rbac-cm",
		"Secret argo/deployctl-argocd-token",
		"ClusterWorkflowTemplate deployctl-sync-and-wait",
		"ClusterWorkflowTemplate deployctl-validate",
		"ClusterWorkflowTemplate deployctl-teardown",
		"ConfigMap argo/minimal-deploy-applications-1",
		"WorkflowTemplate argo/minimal-deploy",
		"WorkflowTemplate argo/minimal-teardown",
		"WorkflowTemplate argo/minimal-validate",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, o := range objs {
		want := FieldManager
		if i <= 4 {
			// generated rbac/: the Argo CD ConfigMaps shared by platforms,
			// and the rest of the folder, applied by hand with the same manager
			want = "deployctl-minimal"
		}
		if o.Manager != want {
			t.Errorf("%s applied by %q, want %q", o, o.Manager, want)
		}
	}
	cm := objs[3].U
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	if data["accounts.deployctl"] != "apiKey" || data["resource.customizations.health.argoproj.io_Application"] == "" ||
		data["resource.customizations.health.ceph.rook.io_CephCluster"] == "" {
		t.Errorf("argocd-cm must carry the account and the health customizations: keys %v", keys(data))
	}
	tok, _, _ := unstructured.NestedString(objs[5].U.Object, "data", "token")
	if tok != "U0VOVElORUwtVE9LRU4tbXVzdC1uZXZlci1iZS1wcmludGVk" { // base64 of the sentinel, newline trimmed
		t.Errorf("token secret data %q", tok)
	}
	for _, o := range objs[9:] {
		if o.U.GetLabels()[compile.LabelSpecHash] == "" {
			t.Errorf("%s lacks the spec-hash label", o)
		}
	}
}

// The webhook token file becomes the Secret of spec.events.webhook.authSecret
// (default deployctl-webhook-token, key token) in the workflow namespace,
// beside the Argo CD token, its newline trimmed (Argo Events compares the
// header with the file's text minus one trailing newline), applied by the
// credentials' field manager; without the file, no such Secret.
func TestWebhookTokenFromSecretsDirectory(t *testing.T) {
	find := func(objs []apply.Object, name string) *apply.Object {
		for i := range objs {
			if objs[i].String() == name {
				return &objs[i]
			}
		}
		return nil
	}
	if o := find(deployObjects(t, nil), "Secret argo/deployctl-webhook-token"); o != nil {
		t.Fatalf("a webhook Secret without the file: %s", o)
	}
	for _, tc := range []struct {
		name string
		ref  *spec.SecretKeyRef
		want string
	}{
		{"default", nil, "Secret argo/deployctl-webhook-token token"},
		{"spec", &spec.SecretKeyRef{Name: "hook", Key: "bearer"}, "Secret argo/hook bearer"},
	} {
		objs := deployObjects(t, func(c *Config) {
			if tc.ref != nil {
				c.DAG.Platform.Spec.Events = &spec.Events{Webhook: &spec.Webhook{AuthSecret: tc.ref}}
			}
			c.secrets[SecretWebhookToken] = []byte("h00k-token\n")
		})
		f := strings.Fields(tc.want)
		o := find(objs, f[0]+" "+f[1])
		if o == nil {
			t.Fatalf("%s: no %s among the objects", tc.name, tc.want)
		}
		data, _, _ := unstructured.NestedStringMap(o.U.Object, "data")
		if len(data) != 1 || data[f[2]] != "aDAway10b2tlbg==" || o.Manager != FieldManager { // base64("h00k-token")
			t.Errorf("%s: %s data %v by %q", tc.name, o, data, o.Manager)
		}
		if tok := find(objs, "Secret argo/deployctl-argocd-token"); tok == nil {
			t.Errorf("%s: the Argo CD token Secret went missing", tc.name)
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// fakeApplier answers server-side apply like the API server does for the
// outcome the executor reads: a new object gets resourceVersion 1, an apply
// that changes nothing keeps the object as it is, a change bumps it.
type fakeApplier struct {
	objs    map[string]*unstructured.Unstructured
	applies int
}

func newFakeDynamic(t *testing.T) (*dynfake.FakeDynamicClient, *fakeApplier) {
	t.Helper()
	f := &fakeApplier{objs: map[string]*unstructured.Unstructured{}}
	dyn := dynfake.NewSimpleDynamicClient(runtime.NewScheme())
	key := func(a k8stesting.Action, name string) string {
		return a.GetResource().Resource + "/" + a.GetNamespace() + "/" + name
	}
	dyn.PrependReactor("get", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		g := a.(k8stesting.GetAction)
		if o, ok := f.objs[key(a, g.GetName())]; ok {
			return true, o.DeepCopy(), nil
		}
		return true, nil, apierrors.NewNotFound(a.GetResource().GroupResource(), g.GetName())
	})
	dyn.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		f.applies++
		var u unstructured.Unstructured
		if err := json.Unmarshal(p.GetPatch(), &u.Object); err != nil {
			return true, nil, err
		}
		k := key(a, p.GetName())
		old, ok := f.objs[k]
		rv := 1
		if ok {
			rv, _ = strconv.Atoi(old.GetResourceVersion())
			if apply.SameObject(withRV(&u, old.GetResourceVersion()), old) {
				return true, old.DeepCopy(), nil
			}
			rv++
		}
		stored := withRV(&u, fmt.Sprint(rv))
		f.objs[k] = stored
		return true, stored.DeepCopy(), nil
	})
	return dyn, f
}

func withRV(u *unstructured.Unstructured, rv string) *unstructured.Unstructured {
	c := u.DeepCopy()
	c.SetResourceVersion(rv)
	return c
}

// Applying twice changes nothing the second time (same resourceVersions);
// a changed object is "configured".
func TestApplyIsIdempotent(t *testing.T) {
	c, err := load(t, ActionDeploy, baseEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := objectsToApply(c, compiled(t, c))
	if err != nil {
		t.Fatal(err)
	}
	dyn, f := newFakeDynamic(t)
	ctx := context.Background()
	first, err := apply.All(ctx, dyn, objs, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := report.CountResults(first); n[report.Created] != len(objs) {
		t.Errorf("first apply: %v", n)
	}
	rvs := map[string]string{}
	for k, o := range f.objs {
		rvs[k] = o.GetResourceVersion()
	}
	second, err := apply.All(ctx, dyn, objs, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := report.CountResults(second); n[report.Unchanged] != len(objs) {
		t.Errorf("second apply: %v", n)
	}
	for k, o := range f.objs {
		if o.GetResourceVersion() != rvs[k] {
			t.Errorf("%s changed: resourceVersion %s → %s", k, rvs[k], o.GetResourceVersion())
		}
	}
	objs[len(objs)-1].U.SetAnnotations(map[string]string{"x": "y"})
	third, err := apply.All(ctx, dyn, objs, false)
	if err != nil {
		t.Fatal(err)
	}
	if last := third[len(third)-1]; last.Result != report.Configured || report.CountResults(third)[report.Unchanged] != len(objs)-1 {
		t.Errorf("third apply: %v", third)
	}
	if f.applies != 3*len(objs) {
		t.Errorf("%d applies", f.applies)
	}
}

// Plugin mode applies rbac/'s plugin objects after the Argo CD partials,
// each token Secret after its ServiceAccount (Kubernetes fills a token only
// for an existing one), all with the platform's manager as rbac/ is applied
// by hand; the Argo CD credentials keep the executor's.
func TestObjectsToApplyPluginMode(t *testing.T) {
	objs := deployObjects(t, func(c *Config) { c.DAG.Platform.Spec.Workflow.StepMode = spec.StepModePlugin })
	var got []string
	for _, o := range objs[:12] {
		got = append(got, o.String()+" by "+o.Manager)
	}
	want := []string{
		"ServiceAccount argo/deployctl by deployctl-minimal",
		"Role argo/deployctl-minimal by deployctl-minimal",
		"RoleBinding argo/deployctl-minimal by deployctl-minimal",
		"ConfigMap argocd/argocd-cm by deployctl-minimal",
		"ConfigMap argocd/argocd-rbac-cm by deployctl-minimal",
		"ConfigMap argo/deployctl-executor-plugin by deployctl-minimal",
		"ServiceAccount argo/deployctl-executor-plugin by deployctl-minimal",
		"Role argo/deployctl-executor-plugin by deployctl-minimal",
		"RoleBinding argo/deployctl-executor-plugin by deployctl-minimal",
		"Secret argo/deployctl.service-account-token by deployctl-minimal",
		"Secret argo/deployctl-executor-plugin.service-account-token by deployctl-minimal",
		"Secret argo/deployctl-argocd-token by deployctl",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	last := ""
	for _, o := range objs {
		if o.U.GetKind() == "ClusterWorkflowTemplate" {
			last = o.String()
		}
	}
	if last != "ClusterWorkflowTemplate deployctl-teardown-plugin" {
		t.Errorf("last CWT %s, want the plugin-mode one", last)
	}
}
