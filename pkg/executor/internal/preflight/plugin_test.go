package preflight

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	metafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/report"
	"github.com/deployctl/deployctl/pkg/spec"
)

func pluginPlatform(t *testing.T) *spec.Platform {
	t.Helper()
	p, err := spec.LoadFile("../../testdata/config/dag.yaml") // the executor's tests' platform
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.Workflow.StepMode = spec.StepModePlugin
	return p
}

// pluginConfigMap is the ConfigMap as rbac/ has it, with image.
func pluginConfigMap(t *testing.T, p *spec.Platform, image string, labels map[string]string) *corev1.ConfigMap {
	t.Helper()
	w := p.Spec.Workflow
	w.Image = image
	text, err := yaml.Marshal(compile.PluginSidecar(w))
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: compile.PluginConfigMap, Namespace: w.Namespace, Labels: labels},
		Data:       map[string]string{"sidecar.container": string(text), "sidecar.automountServiceAccountToken": "true"},
	}
}

func TestPreflightPluginConfigMap(t *testing.T) {
	p := pluginPlatform(t)
	label := map[string]string{compile.PluginConfigMapLabel: compile.PluginKind}
	check := func(action report.Action, objs ...runtime.Object) report.Check {
		r := &checker{Input: Input{Action: action, Platform: p, Clients: &kube.Clients{Kube: fake.NewClientset(objs...)}}}
		return r.checkPluginConfigMap(context.Background())
	}
	if got := check(report.ActionPreflight, pluginConfigMap(t, p, p.Spec.Workflow.Image, label)); got.Status != report.Pass {
		t.Errorf("as generated: %+v", got)
	}
	for name, tc := range map[string]struct {
		objs []runtime.Object
		want string
	}{
		"absent":        {nil, "ConfigMap argo/deployctl-executor-plugin does not exist"},
		"unlabelled":    {[]runtime.Object{pluginConfigMap(t, p, p.Spec.Workflow.Image, nil)}, "is not labelled workflows.argoproj.io/configmap-type=ExecutorPlugin"},
		"another image": {[]runtime.Object{pluginConfigMap(t, p, "example.com/other:2", label)}, "image example.com/other:2, not deployctl-plugin image " + p.Spec.Workflow.Image},
	} {
		got := check(report.ActionPreflight, tc.objs...)
		if got.Status != report.Fail || got.Code != exitcode.Invalid || !strings.Contains(got.Reason, tc.want) || !strings.Contains(got.Reason, "apply rbac/deployctl-executor-plugin.yaml") {
			t.Errorf("%s, preflight: %+v", name, got)
		}
		// deploy applies rbac/ before it submits: a warning only
		got = check(report.ActionDeploy, tc.objs...)
		if got.Status != report.Warn || !strings.Contains(got.Reason, tc.want) || !strings.Contains(got.Reason, "deploy applies rbac/deployctl-executor-plugin.yaml before it submits") {
			t.Errorf("%s, deploy: %+v", name, got)
		}
	}
}

func TestPreflightPluginTokens(t *testing.T) {
	p := pluginPlatform(t)
	secret := func(sa string, filled bool) runtime.Object {
		ann := map[string]string{corev1.ServiceAccountNameKey: sa}
		if filled {
			ann[corev1.ServiceAccountUIDKey] = "0b1c"
		}
		return &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: compile.TokenSecretName(sa), Namespace: "argo", Annotations: ann},
		}
	}
	check := func(action report.Action, objs ...runtime.Object) report.Check {
		scheme := metafake.NewTestScheme()
		metav1.AddMetaToScheme(scheme)
		scheme.AddKnownTypeWithName(corev1.SchemeGroupVersion.WithKind("Secret"), &metav1.PartialObjectMetadata{})
		md := metafake.NewSimpleMetadataClient(scheme, objs...)
		r := &checker{Input: Input{Action: action, Platform: p, Clients: &kube.Clients{Metadata: md}}}
		return r.checkPluginTokens(context.Background())
	}
	if got := check(report.ActionPreflight, secret("deployctl", true), secret(compile.PluginServiceAccount, true)); got.Status != report.Pass {
		t.Errorf("both filled: %+v", got)
	}
	got := check(report.ActionPreflight, secret("deployctl", false))
	if got.Status != report.Fail || got.Code != exitcode.Invalid ||
		!strings.Contains(got.Reason, "Secret argo/deployctl.service-account-token holds no token yet: Kubernetes fills it only while ServiceAccount argo/deployctl exists") ||
		!strings.Contains(got.Reason, "Secret argo/deployctl-executor-plugin.service-account-token (ServiceAccount deployctl-executor-plugin's token, which Argo mounts into the agent pod) does not exist") {
		t.Errorf("one empty, one absent: %+v", got)
	}
	if got := check(report.ActionTeardown); got.Status != report.Warn || !strings.Contains(got.Reason, "teardown applies rbac/") {
		t.Errorf("absent before teardown applies them: %+v", got)
	}
}

func TestPreflightPluginsEnabled(t *testing.T) {
	p := pluginPlatform(t)
	controller := func(args []string, env ...corev1.EnvVar) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "workflow-controller", Namespace: "argo", Labels: map[string]string{"app": "workflow-controller"}},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "workflow-controller", Args: args, Env: env},
			}}}},
		}
	}
	check := func(objs ...runtime.Object) report.Check {
		r := &checker{Input: Input{Action: report.ActionDeploy, Platform: p, Clients: &kube.Clients{Kube: fake.NewClientset(objs...)}}}
		return r.checkPluginsEnabled(context.Background())
	}
	for name, tc := range map[string]struct {
		d      *appsv1.Deployment
		status string
		want   string
	}{
		"env true":   {controller(nil, corev1.EnvVar{Name: "ARGO_EXECUTOR_PLUGINS", Value: "true"}), report.Pass, "executor plugins are on in Deployment argo/workflow-controller"},
		"flag":       {controller([]string{"--configmap", "x", "--executor-plugins"}), report.Pass, "on"},
		"flag=false": {controller([]string{"--executor-plugins=false"}, corev1.EnvVar{Name: "ARGO_EXECUTOR_PLUGINS", Value: "true"}), report.Fail, "are off"},
		"unset":      {controller([]string{"--configmap", "x"}), report.Fail, "`kubectl -n argo set env deployment/workflow-controller ARGO_EXECUTOR_PLUGINS=true`"},
		"env false":  {controller(nil, corev1.EnvVar{Name: "ARGO_EXECUTOR_PLUGINS", Value: "False"}), report.Fail, "neither ARGO_EXECUTOR_PLUGINS=true nor --executor-plugins"},
		"env garbage": {controller(nil, corev1.EnvVar{Name: "ARGO_EXECUTOR_PLUGINS", Value: "yes please"}), report.Warn,
			`ARGO_EXECUTOR_PLUGINS="yes please" is not a boolean; the run will tell`},
		"env from ref": {controller(nil, corev1.EnvVar{Name: "ARGO_EXECUTOR_PLUGINS", ValueFrom: &corev1.EnvVarSource{}}), report.Warn, "comes from a reference"},
	} {
		got := check(tc.d)
		if got.Status != tc.status || !strings.Contains(got.Reason, tc.want) || (got.Status == report.Fail) != (got.Code == exitcode.Invalid) {
			t.Errorf("%s: %+v", name, got)
		}
	}
	if got := check(); got.Status != report.Warn || !strings.Contains(got.Reason, "no workflow-controller Deployment") {
		t.Errorf("no Deployment: %+v", got)
	}
	cs := fake.NewClientset()
	cs.PrependReactor("list", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errForbidden()
	})
	r := &checker{Input: Input{Action: report.ActionDeploy, Platform: p, Clients: &kube.Clients{Kube: cs}}}
	if got := r.checkPluginsEnabled(context.Background()); got.Status != report.Warn || !strings.Contains(got.Reason, "403 Forbidden") || !strings.Contains(got.Reason, "the run will tell") {
		t.Errorf("Deployments forbidden: %+v", got)
	}
}

func errForbidden() error {
	return apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "", nil)
}
