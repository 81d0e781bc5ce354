package compile

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	settingspkg "github.com/argoproj/argo-cd/v2/pkg/apiclient/settings"
	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v2/util/settings"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/step"
	"github.com/deployctl/deployctl/pkg/step/argocd"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// settingsAnswer is what argocd-server's GET /api/v1/settings would answer
// with the given argocd-cm: the resource overrides as argo-cd's settings
// manager parses them, encoded the way its server/settings and gateway do
// (map of *ResourceOverride through encoding/json), decoded into the step's
// struct.
func settingsAnswer(t *testing.T, cm *corev1.ConfigMap) *argocd.Settings {
	t.Helper()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: "argocd-secret", Namespace: cm.Namespace,
		Labels: map[string]string{"app.kubernetes.io/part-of": "argocd"},
	}}
	mgr := settings.NewSettingsManager(context.Background(), fake.NewClientset(cm, secret), cm.Namespace)
	overrides, err := mgr.GetResourceOverrides()
	if err != nil {
		t.Fatalf("Argo CD rejects the generated argocd-cm: %v", err)
	}
	set := settingspkg.Settings{ResourceOverrides: map[string]*v1alpha1.ResourceOverride{}}
	for k := range overrides {
		v := overrides[k]
		set.ResourceOverrides[k] = &v
	}
	raw, err := json.Marshal(&set)
	if err != nil {
		t.Fatal(err)
	}
	var got argocd.Settings
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	return &got
}

// The platform relies on a custom kind (spec.healthCustomizations). The
// argocd-cm partial of rbac/ carries its script beside the account, and
// what Argo CD serves from it satisfies every requirement the deploy passes
// to its sync-and-wait nodes; without the key, the custom kind's
// requirement is not met.
func TestHealthCustomizationsInRBACAndDeploy(t *testing.T) {
	d, err := dag.Load("../../examples/reference-platform.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Compile(d, "platform")
	if err != nil {
		t.Fatal(err)
	}
	var cm *corev1.ConfigMap
	for _, o := range out.RBAC {
		if c, ok := o.(*corev1.ConfigMap); ok && c.Name == "argocd-cm" {
			cm = c
		}
	}
	if cm == nil || cm.Data["accounts."+ArgoCDAccount] != "apiKey" {
		t.Fatalf("rbac/ has no argocd-cm partial with the account: %v", cm)
	}
	const custom = "resource.customizations.health.kafka.strimzi.io_Kafka"
	if !strings.Contains(cm.Data[custom], "hs") {
		t.Fatalf("argocd-cm partial lacks the spec's %s: keys %v", custom, cm.Data)
	}

	var reqs []string
	for _, p := range out.WorkflowTemplates[dag.Deploy].Spec.Arguments.Parameters {
		if p.Name == stepcontract.WorkflowHealthCustomizations {
			reqs = strings.Split(p.Value.String(), "\n")
		}
	}
	if len(reqs) != len(cm.Data)-1 {
		t.Fatalf("deploy requires %d health customizations, argocd-cm partial has %d: %v", len(reqs), len(cm.Data)-1, reqs)
	}
	met := func(s *argocd.Settings) (unmet []string) {
		for _, r := range reqs {
			key, _, _ := strings.Cut(r, "=")
			o, ok := s.ResourceOverrides[key]
			if !ok || step.HealthRequirement(key, o.HealthLua) != r {
				unmet = append(unmet, key)
			}
		}
		return unmet
	}
	if unmet := met(settingsAnswer(t, cm.DeepCopy())); len(unmet) > 0 {
		t.Errorf("Argo CD with the generated argocd-cm does not meet %v", unmet)
	}
	without := cm.DeepCopy()
	delete(without.Data, custom)
	if unmet := met(settingsAnswer(t, without)); len(unmet) != 1 || unmet[0] != "kafka.strimzi.io/Kafka" {
		t.Errorf("without %s, unmet %v; want [kafka.strimzi.io/Kafka]", custom, unmet)
	}
	passed := false
	for _, c := range out.ClusterTemplates {
		for _, tmpl := range c.Spec.Templates {
			if c.Name != CWTSyncAndWait || tmpl.Container == nil {
				continue
			}
			for _, e := range tmpl.Container.Env {
				passed = passed || (e.Name == "HEALTH_CUSTOMIZATION" && e.Value == "{{workflow.parameters."+stepcontract.WorkflowHealthCustomizations+"}}")
			}
		}
	}
	if !passed {
		t.Errorf("%s does not pass the workflow parameter %s to the step as HEALTH_CUSTOMIZATION", CWTSyncAndWait, stepcontract.WorkflowHealthCustomizations)
	}
	for _, other := range []dag.Action{dag.Teardown, dag.Validate} {
		for _, p := range out.WorkflowTemplates[other].Spec.Arguments.Parameters {
			if p.Name == stepcontract.WorkflowHealthCustomizations {
				t.Errorf("%s template carries %s: only deploy syncs", other, p.Name)
			}
		}
	}
}
