package compile

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/deployctl/deployctl/pkg/spec"
)

// shopPlugin compiles testdata/shop.yaml in plugin mode, with a CA secret.
func shopPlugin(t *testing.T) *Output {
	t.Helper()
	return shopWith(t, func(p *spec.Platform) {
		p.Spec.Workflow.StepMode = spec.StepModePlugin
		p.Spec.ArgoCD.CASecret = &spec.SecretKeyRef{Name: "shop-ca", Key: "bundle.pem"}
	})
}

// pluginBody is a plugin template's `plugin.deployctl`.
type pluginBody struct {
	Args    []string        `json:"args"`
	Env     []corev1.EnvVar `json:"env"`
	Node    string          `json:"node"`
	Attempt string          `json:"attempt"`
}

func bodyOf(t *testing.T, tmpl wfv1.Template) pluginBody {
	t.Helper()
	if tmpl.Plugin == nil {
		t.Fatalf("%s: not a plugin template", tmpl.Name)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(tmpl.Plugin.Value, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 || m[PluginName] == nil {
		t.Fatalf("%s: plugin keys %v, want only %s", tmpl.Name, m, PluginName)
	}
	var b pluginBody
	dec := json.NewDecoder(strings.NewReader(string(m[PluginName])))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("%s: %v", tmpl.Name, err)
	}
	return b
}

// Each plugin template is its pod template's command line and environment
// (minus RESULT_FILE) for the plugin, naming its node and attempt, the
// same name, inputs and retry
// limits and backoff, retried on Error (the plugin's transient phase), and
// none of the pod fields Argo ignores for a plugin.
func TestPluginTemplatesAreThePodCommands(t *testing.T) {
	pod, plug := shop(t), shopPlugin(t)
	if len(pod.ClusterTemplates) != len(plug.ClusterTemplates) {
		t.Fatalf("%d plugin CWTs for %d pod CWTs", len(plug.ClusterTemplates), len(pod.ClusterTemplates))
	}
	for i, pc := range pod.ClusterTemplates {
		gc := plug.ClusterTemplates[i]
		if gc.Name != pc.Name+PluginCWTSuffix {
			t.Errorf("CWT %s in plugin mode is %s", pc.Name, gc.Name)
		}
		if !reflect.DeepEqual(gc.Spec.Arguments, pc.Spec.Arguments) {
			t.Errorf("%s: arguments differ", gc.Name)
		}
		if !strings.Contains(gc.Annotations["workflows.argoproj.io/description"], "the plugin bounds each node") {
			t.Errorf("%s: the description does not say who bounds a node in plugin mode", gc.Name)
		}
		for j, pt := range pc.Spec.Templates {
			gt := gc.Spec.Templates[j]
			where := gc.Name + "/" + gt.Name
			if gt.Name != pt.Name || !reflect.DeepEqual(gt.Inputs, pt.Inputs) {
				t.Errorf("%s: name or inputs differ from pod mode's", where)
			}
			b := bodyOf(t, gt)
			if !reflect.DeepEqual(b.Args, pt.Container.Args) {
				t.Errorf("%s: args %q, want the container's %q", where, b.Args, pt.Container.Args)
			}
			var env []corev1.EnvVar
			for _, e := range pt.Container.Env {
				if e.Name != "RESULT_FILE" {
					env = append(env, e)
				}
			}
			if !reflect.DeepEqual(b.Env, env) {
				t.Errorf("%s: env %v, want the container's minus RESULT_FILE %v", where, b.Env, env)
			}
			if b.Node != "{{node.name}}" || b.Attempt != "{{retries}}" {
				t.Errorf("%s: node %q, attempt %q: want Argo's node name and attempt to fill", where, b.Node, b.Attempt)
			}
			if gt.Container != nil || gt.Volumes != nil || gt.SecurityContext != nil || gt.ActiveDeadlineSeconds != nil {
				t.Errorf("%s: pod fields on a plugin template", where)
			}
			r, pr := gt.RetryStrategy, pt.RetryStrategy
			if r == nil || r.Expression != `lastRetry.status == "Error"` || r.RetryPolicy != wfv1.RetryPolicyAlways ||
				!reflect.DeepEqual(r.Limit, pr.Limit) || !reflect.DeepEqual(r.Backoff, pr.Backoff) {
				t.Errorf("%s: retryStrategy %+v", where, r)
			}
			if len(gt.Outputs.Parameters) != 1 || gt.Outputs.Parameters[0].Name != "result" || gt.Outputs.Parameters[0].ValueFrom.Supplied == nil {
				t.Errorf("%s: outputs %+v, want result supplied by the plugin", where, gt.Outputs)
			}
		}
	}
}

// The DAGs are pod mode's but for the CWT each task calls; each
// WorkflowTemplate gives the agent pod the credential volumes with the
// spec's secret names; pod mode has no podSpecPatch at all.
func TestPluginWorkflowTemplates(t *testing.T) {
	pod, plug := shop(t), shopPlugin(t)
	for _, a := range Actions {
		pw, gw := pod.WorkflowTemplates[a], plug.WorkflowTemplates[a]
		if pw.Spec.PodSpecPatch != "" {
			t.Errorf("%s: pod mode has podSpecPatch %s", a, pw.Spec.PodSpecPatch)
		}
		pt, gt := pw.Spec.Templates[0].DAG.Tasks, gw.Spec.Templates[0].DAG.Tasks
		if len(pt) != len(gt) {
			t.Fatalf("%s: %d tasks in plugin mode, %d in pod mode", a, len(gt), len(pt))
		}
		for i := range pt {
			want := *pt[i].DeepCopy()
			if want.TemplateRef != nil {
				want.TemplateRef.Name += PluginCWTSuffix
			}
			if !reflect.DeepEqual(gt[i], want) {
				t.Errorf("%s: task %s differs beyond its CWT's name:\n%+v\n%+v", a, pt[i].Name, gt[i], want)
			}
		}
		var patch corev1.PodSpec
		dec := json.NewDecoder(strings.NewReader(gw.Spec.PodSpecPatch))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&patch); err != nil {
			t.Fatalf("%s: podSpecPatch: %v", a, err)
		}
		want := []corev1.Volume{
			{Name: "argocd-token", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: "deployctl-argocd-token", DefaultMode: ptr(int32(0o440)), Items: []corev1.KeyToPath{{Key: "token", Path: "token"}}}}},
			{Name: "argocd-ca", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: "shop-ca", Optional: ptr(true), DefaultMode: ptr(int32(0o444)), Items: []corev1.KeyToPath{{Key: "bundle.pem", Path: "ca.crt"}}}}},
		}
		if !reflect.DeepEqual(patch.Volumes, want) || patch.SecurityContext == nil || *patch.SecurityContext.FSGroup != 65532 || len(patch.Containers) != 0 ||
			patch.TerminationGracePeriodSeconds == nil || *patch.TerminationGracePeriodSeconds != 10 {
			t.Errorf("%s: podSpecPatch %s", a, gw.Spec.PodSpecPatch)
		}
	}
}

// RBAC in plugin mode: the workflow Role gains exactly Argo's agent rules;
// the plugin's service account may only get workflows in the workflow
// namespace; the two legacy token Secrets; the plugin's declaration. Pod
// mode has none of it.
func TestPluginRBACIsLeastPrivilege(t *testing.T) {
	out := shopPlugin(t)
	roles := map[string]*rbacv1.Role{}
	bindings := map[string]*rbacv1.RoleBinding{}
	sas := map[string]*corev1.ServiceAccount{}
	secrets := map[string]*corev1.Secret{}
	var cm *corev1.ConfigMap
	for _, o := range out.RBAC {
		switch o := o.(type) {
		case *rbacv1.Role:
			roles[o.Name] = o
		case *rbacv1.RoleBinding:
			bindings[o.Name] = o
		case *corev1.ServiceAccount:
			sas[o.Name] = o
		case *corev1.Secret:
			secrets[o.Name] = o
		case *corev1.ConfigMap:
			if o.Name == PluginConfigMap {
				cm = o
			}
		}
	}
	rule := func(res, verbs string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{"argoproj.io"}, Resources: []string{res}, Verbs: strings.Split(verbs, ",")}
	}
	wantRoles := map[string][]rbacv1.PolicyRule{
		"deployctl-shop":     {rule("workflowtaskresults", "create,patch"), rule("workflowtasksets", "list,watch"), rule("workflowtasksets/status", "patch")},
		PluginServiceAccount: {rule("workflows", "get")},
	}
	if len(roles) != len(wantRoles) {
		t.Errorf("%d Roles, want %d", len(roles), len(wantRoles))
	}
	for name, rules := range wantRoles {
		if r := roles[name]; r == nil || r.Namespace != "argo" || !reflect.DeepEqual(r.Rules, rules) {
			t.Errorf("Role %s: %+v, want rules %+v in argo", name, r, rules)
		}
	}
	if b := bindings[PluginServiceAccount]; b == nil || b.RoleRef.Name != PluginServiceAccount ||
		!reflect.DeepEqual(b.Subjects, []rbacv1.Subject{{Kind: "ServiceAccount", Name: PluginServiceAccount, Namespace: "argo"}}) {
		t.Errorf("plugin RoleBinding %+v", b)
	}
	if sa := sas[PluginServiceAccount]; sa == nil || sa.AutomountServiceAccountToken == nil || !*sa.AutomountServiceAccountToken {
		t.Errorf("plugin ServiceAccount %+v, want automount", sa)
	}
	for _, sa := range []string{"deployctl", PluginServiceAccount} {
		s := secrets[sa+".service-account-token"]
		if s == nil || s.Type != corev1.SecretTypeServiceAccountToken || s.Annotations[corev1.ServiceAccountNameKey] != sa || s.Namespace != "argo" || len(s.Data) != 0 {
			t.Errorf("token Secret of %s: %+v", sa, s)
		}
	}
	if len(secrets) != 2 {
		t.Errorf("%d Secrets, want the two tokens", len(secrets))
	}
	if cm == nil || cm.Namespace != "argo" || cm.Labels[PluginConfigMapLabel] != PluginKind || cm.Data["sidecar.automountServiceAccountToken"] != "true" ||
		!strings.Contains(cm.Data["sidecar.container"], "image: registry.example.com/deploystep:v1\n") {
		t.Errorf("plugin ConfigMap %+v", cm)
	}
	for _, o := range shop(t).RBAC {
		switch o := o.(type) {
		case *corev1.Secret:
			t.Errorf("pod mode has Secret %s", o.Name)
		case *rbacv1.Role:
			if len(o.Rules) != 1 {
				t.Errorf("pod mode's Role has %d rules", len(o.Rules))
			}
		case *corev1.ServiceAccount:
			if o.Name == PluginServiceAccount {
				t.Error("pod mode has the plugin's ServiceAccount")
			}
		}
	}
}
