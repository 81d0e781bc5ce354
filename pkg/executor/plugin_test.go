package executor

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metafake "k8s.io/client-go/metadata/fake"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/executor/internal/metrics"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/livestate/livestatetest"
	"github.com/deployctl/deployctl/pkg/report"
	"github.com/deployctl/deployctl/pkg/spec"
)

// A plugin-mode run whose agent pod has no deployctl plugin: the executor
// stops following at the first node Argo failed with "no plugin executed
// the template", stops the run, and ends with exit 3 and the fix (the
// controller's ARGO_EXECUTOR_PLUGINS and the plugin's ConfigMap), saying no
// Application was touched. The components carry the agent's message, not
// Argo's retry verdict.
func TestNoPluginStopsTheRunWithTheFix(t *testing.T) {
	c, err := load(t, ActionDeploy, baseEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	c.DAG.Platform.Spec.Workflow.StepMode = spec.StepModePlugin
	out, err := compile.Compile(c.DAG, c.Scope)
	if err != nil {
		t.Fatal(err)
	}
	w := livestatetest.NoPluginDeploy(t)
	wfs := wffake.NewSimpleClientset(w)
	r := &run{cfg: c, cl: &kube.Clients{Workflows: wfs}, out: io.Discard, report: newReport(c, ActionDeploy), compiled: out, poll: time.Hour,
		log: NewLog(io.Discard, string(ActionDeploy), c.LogLevel, c.LogFormat, c.TraceID, c.SpanID, c.redact)}
	r.metrics = metrics.New(string(ActionDeploy), r.report.Platform, c.Environment, errorPhases, c.redact)
	r.report.Workflow = &report.WorkflowRun{Namespace: "argo"}

	code, summary, _ := r.followAndReport(context.Background(), w, r.componentRefs(dag.Deploy), nil)
	if code != exitcode.Invalid {
		t.Errorf("exit %d, want %d", code, exitcode.Invalid)
	}
	for _, want := range []string{`nodes cert-manager, ingress-nginx failed with "no plugin executed the template"`, "no Application was touched", "minimal-deploy-p1 was stopped"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q: %s", want, summary)
		}
	}
	recs := strings.Join(r.report.Recommendations, "\n")
	for _, want := range []string{"ARGO_EXECUTOR_PLUGINS=true", "ConfigMap argo/deployctl-executor-plugin", "workflows.argoproj.io/configmap-type=ExecutorPlugin", "stepMode: pod"} {
		if !strings.Contains(recs, want) {
			t.Errorf("recommendations lack %q:\n%s", want, recs)
		}
	}
	live, err := wfs.ArgoprojV1alpha1().Workflows("argo").Get(context.Background(), w.Name, metav1.GetOptions{})
	if err != nil || live.Spec.Shutdown != wfv1.ShutdownStrategyStop {
		t.Errorf("the run is not stopped: %v %q", err, live.Spec.Shutdown)
	}
	for _, comp := range r.report.Components {
		if comp.Name == "cert-manager" && comp.Message != "no plugin executed the template" {
			t.Errorf("cert-manager's message %q, want the agent's", comp.Message)
		}
	}
}

// After applying plugin mode's rbac/, deploy waits for the token Secrets
// Kubernetes fills (metadata only) so the agent pod does not mount an empty
// one; if they stay empty it warns and goes on.
func TestAwaitTokens(t *testing.T) {
	c, err := load(t, ActionDeploy, baseEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	c.DAG.Platform.Spec.Workflow.StepMode = spec.StepModePlugin
	secret := func(name string, filled bool) runtime.Object {
		m := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argo", Annotations: map[string]string{}}}
		if filled {
			m.Annotations[corev1.ServiceAccountUIDKey] = "u1"
		}
		return m
	}
	defer func(d time.Duration) { tokenWait = d }(tokenWait)
	tokenWait = 50 * time.Millisecond
	for _, filled := range []bool{true, false} {
		scheme := metafake.NewTestScheme()
		metav1.AddMetaToScheme(scheme)
		scheme.AddKnownTypeWithName(corev1.SchemeGroupVersion.WithKind("Secret"), &metav1.PartialObjectMetadata{})
		md := metafake.NewSimpleMetadataClient(scheme, secret("deployctl.service-account-token", filled), secret("deployctl-executor-plugin.service-account-token", filled))
		var logs strings.Builder
		r := &run{cfg: c, cl: &kube.Clients{Metadata: md}, poll: 20 * time.Millisecond,
			log: NewLog(&logs, string(ActionDeploy), "info", "text", "", "", c.redact)}
		r.awaitTokens(context.Background())
		gets := len(md.Actions())
		warned := strings.Contains(logs.String(), "token Secret not ready")
		if filled && (gets != 2 || warned) {
			t.Errorf("filled: %d reads, warned %v:\n%s", gets, warned, logs.String())
		}
		if !filled && (gets < 2 || !warned || !strings.Contains(logs.String(), "argo/deployctl.service-account-token")) {
			t.Errorf("empty: %d reads, warned %v:\n%s", gets, warned, logs.String())
		}
	}
}
