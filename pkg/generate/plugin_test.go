package generate

import (
	"path/filepath"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wfutil "github.com/argoproj/argo-workflows/v3/workflow/util"
	plugin "github.com/argoproj/argo-workflows/v3/workflow/util/plugins"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/render"
	"github.com/deployctl/deployctl/pkg/spec"
)

// generatePlugin generates an example as if its spec said
// workflow.stepMode: plugin.
func generatePlugin(t *testing.T, file, scope string) render.Tree {
	t.Helper()
	d, err := dag.Load(file)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	d.Platform.Spec.Workflow.StepMode = spec.StepModePlugin
	tree, _, err := Tree(d, scope)
	if err != nil {
		t.Fatalf("%s: generate: %v", file, err)
	}
	return tree
}

// TestArgoValidatorAcceptsPluginMode runs Argo's validator on every
// example's templates and workflows in plugin mode, and Argo's own plugin
// loader on the generated plugin ConfigMap.
func TestArgoValidatorAcceptsPluginMode(t *testing.T) {
	for _, file := range examples(t) {
		{
			t.Run(filepath.Base(file), func(t *testing.T) {
				tree := generatePlugin(t, file, "platform")
				p := parse(t, tree)
				if len(p.cwts) != 3 || len(p.wts) != 3 || len(p.wfs) != 3 {
					t.Fatalf("want 3 CWTs, 3 WorkflowTemplates, 3 Workflows; got %d, %d, %d", len(p.cwts), len(p.wts), len(p.wfs))
				}
				for name, c := range p.cwts {
					if !strings.HasSuffix(name, compile.PluginCWTSuffix) {
						t.Errorf("ClusterWorkflowTemplate %s: plugin mode's are named apart from pod mode's", name)
					}
					for _, tmpl := range c.Spec.Templates {
						if tmpl.GetType() != wfv1.TemplateTypePlugin {
							t.Errorf("%s/%s: a %s template, want a plugin template", name, tmpl.Name, tmpl.GetType())
						}
					}
				}
				argoValidate(t, p)
				var cm corev1.ConfigMap
				if err := yaml.UnmarshalStrict(tree["rbac/"+compile.PluginConfigMap+".yaml"], &cm); err != nil {
					t.Fatalf("plugin ConfigMap: %v", err)
				}
				pl, err := plugin.FromConfigMap(&cm)
				if err != nil {
					t.Fatalf("Argo refuses the plugin ConfigMap: %v", err)
				}
				if pl.Kind != compile.PluginKind || pl.Name != compile.PluginName || !pl.Spec.Sidecar.AutomountServiceAccountToken {
					t.Errorf("Argo reads plugin %q of kind %q (automount %v), want %q of kind %q with its token", pl.Name, pl.Kind, pl.Spec.Sidecar.AutomountServiceAccountToken, compile.PluginName, compile.PluginKind)
				}
				agentPod(t, p, pl.Spec.Sidecar.Container)
			})
		}
	}
}

// agentPod applies each WorkflowTemplate's podSpecPatch as Argo does to the
// agent pod (util.ApplyPodSpecPatch) and checks every volume the sidecar
// mounts is then there, as the step pods define it, readable by the
// sidecar's group.
func agentPod(t *testing.T, p parsed, sidecar corev1.Container) {
	t.Helper()
	for name, wt := range p.wts {
		pod := corev1.PodSpec{Containers: []corev1.Container{sidecar}}
		patched, err := wfutil.ApplyPodSpecPatch(pod, wt.Spec.PodSpecPatch)
		if err != nil {
			t.Fatalf("%s: podSpecPatch: %v", name, err)
		}
		if sc := patched.SecurityContext; sc == nil || sc.FSGroup == nil || *sc.FSGroup != *sidecar.SecurityContext.RunAsGroup {
			t.Errorf("%s: agent pod fsGroup %+v, want the sidecar's group (the token file is 0440)", name, sc)
		}
		volumes := map[string]corev1.Volume{}
		for _, v := range patched.Volumes {
			volumes[v.Name] = v
		}
		for _, m := range sidecar.VolumeMounts {
			v, ok := volumes[m.Name]
			if !ok || v.Secret == nil {
				t.Errorf("%s: the sidecar mounts %s, which the agent pod does not have as a secret volume", name, m.Name)
				continue
			}
			if !m.ReadOnly {
				t.Errorf("%s: %s mounted writable", name, m.Name)
			}
			if strings.Contains(v.Secret.SecretName, "{{") {
				t.Errorf("%s: volume %s names secret %q: a podSpecPatch is not substituted, the name must be the spec's", name, m.Name, v.Secret.SecretName)
			}
		}
	}
}

// TestPluginSidecarIsLockedDown: the plugin's sidecar is as locked down as
// a step pod's container, and has only the Argo CD token as a file.
func TestPluginSidecarIsLockedDown(t *testing.T) {
	c := compile.PluginSidecar(spec.Workflow{Image: "example.com/deploystep:1", ImagePullPolicy: "IfNotPresent"})
	cs := c.SecurityContext
	if cs == nil || cs.RunAsNonRoot == nil || !*cs.RunAsNonRoot || cs.RunAsUser == nil || *cs.RunAsUser == 0 ||
		cs.RunAsGroup == nil || *cs.RunAsGroup == 0 ||
		cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem ||
		cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation ||
		cs.Capabilities == nil || len(cs.Capabilities.Drop) != 1 || cs.Capabilities.Drop[0] != "ALL" || len(cs.Capabilities.Add) != 0 ||
		cs.SeccompProfile == nil || cs.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault || cs.Privileged != nil && *cs.Privileged {
		t.Errorf("sidecar security context not locked down: %+v", cs)
	}
	if len(c.Env) != 0 || len(c.EnvFrom) != 0 {
		t.Errorf("sidecar has environment %v %v: credentials must be files", c.Env, c.EnvFrom)
	}
	if c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("sidecar resources %+v: Argo requires requests and limits", c.Resources)
	}
	if got := strings.Join(c.Command, " "); got != "/deploystep serve --listen=127.0.0.1:4355" {
		t.Errorf("command %q: the plugin must listen on the pod's loopback only", got)
	}
}
