package generate

import (
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/workflow/validate"
	corev1 "k8s.io/api/core/v1"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// TestPodsAreLockedDown: every pod the generated workflows can start runs
// non-root, read-only, without capabilities, with RuntimeDefault seccomp,
// and gets the Argo CD token only as a mounted file.
func TestPodsAreLockedDown(t *testing.T) {
	for _, file := range examples(t) {
		p := parse(t, generateFile(t, file, "platform"))
		for name, cwt := range p.cwts {
			for _, tmpl := range cwt.Spec.Templates {
				c := tmpl.Container
				if c == nil {
					t.Errorf("%s/%s: not a container template", name, tmpl.Name)
					continue
				}
				where := name + "/" + tmpl.Name
				ps := tmpl.SecurityContext
				if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser == 0 ||
					ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
					t.Errorf("%s: pod security context not locked down: %+v", where, ps)
				}
				cs := c.SecurityContext
				if cs == nil || cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem ||
					cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation ||
					cs.Capabilities == nil || len(cs.Capabilities.Drop) != 1 || cs.Capabilities.Drop[0] != "ALL" || len(cs.Capabilities.Add) != 0 {
					t.Errorf("%s: container security context not locked down: %+v", where, cs)
				}
				if strings.Contains(c.Image, "DEPLOYSTEP_IMAGE") || c.Image == "" {
					t.Errorf("%s: image not set from the spec: %q", where, c.Image)
				}
				tokenMounted := false
				for _, m := range c.VolumeMounts {
					if m.Name == "argocd-token" && m.ReadOnly && m.MountPath == "/var/run/secrets/argocd" {
						tokenMounted = true
					}
				}
				if !tokenMounted {
					t.Errorf("%s: Argo CD token not mounted read-only as a file", where)
				}
				for _, e := range c.Env {
					if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
						t.Errorf("%s: secret %s exposed as env var %s", where, e.ValueFrom.SecretKeyRef.Name, e.Name)
					}
					if strings.Contains(strings.ToLower(e.Name), "token") && e.Name != "ARGOCD_TOKEN_FILE" {
						t.Errorf("%s: token-like env var %s", where, e.Name)
					}
				}
				for _, a := range c.Args {
					if strings.Contains(strings.ToLower(a), "token") {
						t.Errorf("%s: token-like argument %q", where, a)
					}
				}
			}
		}
		for name, wt := range p.wts {
			sc := wt.Spec.SecurityContext
			if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
				t.Errorf("%s: workflow pods may run as root", name)
			}
		}
	}
}

// TestTeardownRefusedWithoutConfirmation validates the teardown workflow the
// way a submission is validated: without -p confirm Argo refuses it. A
// wrong value gets past Argo (the Workflow's own parameter carries no enum),
// so every teardown step checks it again and deletes nothing: the step's
// tests cover that; here the argument must at least reach every step.
func TestTeardownRefusedWithoutConfirmation(t *testing.T) {
	p := parse(t, generateFile(t, "../../examples/minimal.yaml", "platform"))
	wf := p.wfs["workflows/teardown.yaml"]
	submit := validate.ValidateOpts{Submit: true}
	with := func(v *string) *wfv1.Workflow {
		w := wf.DeepCopy()
		if v != nil {
			w.Spec.Arguments.Parameters = []wfv1.Parameter{{Name: "confirm", Value: wfv1.AnyStringPtr(*v)}}
		}
		return w
	}
	right := "minimal"
	if err := validate.ValidateWorkflow(p.wts, p.cwts, with(nil), nil, submit); err == nil {
		t.Error("teardown without confirm accepted")
	}
	for _, task := range p.wts["minimal-teardown"].Spec.Templates[0].DAG.Tasks {
		if task.TemplateRef == nil {
			continue
		}
		// The task passes none: the template's input defaults to the
		// workflow's confirm (issue 24); one it did pass must be that.
		v := task.Arguments.GetParameterByName("confirm")
		if v == nil {
			if cwt := p.cwts[task.TemplateRef.Name]; cwt != nil {
				v = cwt.Spec.Templates[0].Inputs.GetParameterByName("confirm")
				if v != nil {
					v = &wfv1.Parameter{Value: v.Default}
				}
			}
		}
		if v == nil || v.Value == nil || v.Value.String() != "{{workflow.parameters.confirm}}" {
			t.Errorf("teardown task %s does not pass the confirmation to the step", task.Name)
		}
	}
	if err := validate.ValidateWorkflow(p.wts, p.cwts, with(&right), nil, submit); err != nil {
		t.Errorf("teardown with confirm=minimal refused: %v", err)
	}
}

// TestCASecretReachesTheStep: argocd.caSecret is mounted as a file and its
// path handed to the step; without it the step gets no CA file.
func TestCASecretReachesTheStep(t *testing.T) {
	for _, withCA := range []bool{false, true} {
		d, err := dag.Load("../../examples/minimal.yaml")
		if err != nil {
			t.Fatal(err)
		}
		d.Platform.Spec.ArgoCD.CASecret = nil // the example names one (the Quickstart's)
		if withCA {
			d.Platform.Spec.ArgoCD.CASecret = &spec.SecretKeyRef{Name: "argocd-ca", Key: "bundle.pem"}
		}
		tree, _, err := Tree(d, "platform")
		if err != nil {
			t.Fatal(err)
		}
		p := parse(t, tree)
		args := p.wts["minimal-deploy"].Spec.Arguments
		file, secret := args.GetParameterByName("argocd-ca-file").Value.String(), args.GetParameterByName("ca-secret").Value.String()
		switch {
		case withCA && (file != "/var/run/secrets/argocd-ca/ca.crt" || secret != "argocd-ca" || args.GetParameterByName("ca-key").Value.String() != "bundle.pem"):
			t.Errorf("with caSecret: file %q secret %q", file, secret)
		case !withCA && file != "":
			t.Errorf("without caSecret the step is given CA file %q", file)
		}
		for name, cwt := range p.cwts {
			c := cwt.Spec.Templates[0].Container
			mounted := false
			for _, m := range c.VolumeMounts {
				mounted = mounted || (m.Name == "argocd-ca" && m.MountPath == "/var/run/secrets/argocd-ca")
			}
			env := ""
			for _, e := range c.Env {
				if e.Name == "ARGOCD_CA_FILE" {
					env = e.Value
				}
			}
			if !mounted || env != "{{workflow.parameters.argocd-ca-file}}" {
				t.Errorf("%s: CA not mounted (%v) or not passed (%q)", name, mounted, env)
			}
		}
	}
}
