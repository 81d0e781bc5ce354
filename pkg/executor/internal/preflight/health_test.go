package preflight

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/deployctl/deployctl/pkg/healthlua"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/report"
	"github.com/deployctl/deployctl/pkg/spec"
)

// The preflight's health-customizations check reads the argocd-cm Argo CD
// reads: all generated scripts present passes; a missing or edited one is
// named (a warning: deploy applies them before it submits).
func TestPreflightHealthCustomizations(t *testing.T) {
	p, err := spec.LoadFile("../../testdata/config/dag.yaml") // the executor's tests' platform
	if err != nil {
		t.Fatal(err)
	}
	want, err := healthlua.ConfigMapData(p)
	if err != nil {
		t.Fatal(err)
	}
	ns := p.Spec.ArgoCD.Namespace
	check := func(data map[string]string) report.Check {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argocd-cm", Namespace: ns}, Data: data}
		r := &checker{Input: Input{Action: report.ActionDeploy, Platform: p, Clients: &kube.Clients{Kube: fake.NewClientset(cm)}}}
		return r.checkHealthCustomizations(context.Background())
	}
	all := map[string]string{"admin.enabled": "true"}
	for k, v := range want {
		all[k] = v + "\n" // trailing white space is not a difference
	}
	if got := check(all); got.Status != report.Pass {
		t.Errorf("all present: %+v", got)
	}
	const app = "resource.customizations.health.argoproj.io_Application"
	edited := map[string]string{}
	for k, v := range all {
		edited[k] = v
	}
	delete(edited, "resource.customizations.health.ceph.rook.io_CephCluster")
	edited[app] = "hs = {status = \"Healthy\"}\nreturn hs"
	got := check(edited)
	if got.Status != report.Warn || !strings.Contains(got.Reason, "missing resource.customizations.health.ceph.rook.io_CephCluster") ||
		!strings.Contains(got.Reason, "not the generated script: "+app) || !strings.Contains(got.Reason, "deploy applies them") {
		t.Errorf("one missing, one edited: %+v", got)
	}
	if got := check(nil); got.Status != report.Warn || !strings.Contains(got.Reason, app) {
		t.Errorf("none: %+v", got)
	}
}
