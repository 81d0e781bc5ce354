package compile

import (
	"fmt"
	"path"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/internal/safeyaml"

	"github.com/deployctl/deployctl/pkg/spec"
	"github.com/deployctl/deployctl/templates"
)

// cwtFiles are the hand-written ClusterWorkflowTemplates, in output order.
var cwtFiles = []string{"sync-and-wait.yaml", "validate.yaml", "teardown.yaml"}

// ClusterWorkflowTemplates loads the reusable templates embedded from
// templates/cluster-workflow-templates and points them at the spec's step
// image. They are platform-independent: one set serves every platform that
// uses the same image (and step mode: plugin mode's are named apart).
func ClusterWorkflowTemplates(w spec.Workflow) ([]*wfv1.ClusterWorkflowTemplate, error) {
	var out []*wfv1.ClusterWorkflowTemplate
	for _, f := range cwtFiles {
		data, err := templates.FS.ReadFile(path.Join("cluster-workflow-templates", f))
		if err != nil {
			return nil, err
		}
		var cwt wfv1.ClusterWorkflowTemplate
		if err := safeyaml.UnmarshalJSON(data, &cwt, yaml.DisallowUnknownFields); err != nil {
			return nil, fmt.Errorf("templates/cluster-workflow-templates/%s: %w", f, err)
		}
		for i := range cwt.Spec.Templates {
			if c := cwt.Spec.Templates[i].Container; c != nil {
				c.Image = w.Image
				c.ImagePullPolicy = corev1.PullPolicy(w.ImagePullPolicy)
			}
		}
		if w.Plugin() {
			if err := pluginCWT(&cwt); err != nil {
				return nil, err
			}
		}
		out = append(out, &cwt)
	}
	return out, nil
}

// templateRef points a DAG task at one of the ClusterWorkflowTemplates.
func templateRef(cwt, tmpl string) *wfv1.TemplateRef {
	return &wfv1.TemplateRef{Name: cwt, Template: tmpl, ClusterScope: true}
}

// inputDefaults are the ClusterWorkflowTemplates' input defaults:
// "cwt/template" → input → default.
type inputDefaults map[string]map[string]string

func inputDefaultsOf(cwts []*wfv1.ClusterWorkflowTemplate) inputDefaults {
	defaults := inputDefaults{}
	for _, c := range cwts {
		for _, t := range c.Spec.Templates {
			m := map[string]string{}
			for _, in := range t.Inputs.Parameters {
				if in.Default != nil {
					m[in.Name] = in.Default.String()
				}
			}
			defaults[c.Name+"/"+t.Name] = m
		}
	}
	return defaults
}

// drop removes the task's arguments equal to the called template's own
// input default: the same run, a smaller WorkflowTemplate (size is what
// bounds a platform, see render.MaxObjectBytes).
func (defaults inputDefaults) drop(t *wfv1.DAGTask) {
	ref := t.TemplateRef
	if ref == nil {
		return
	}
	def := defaults[ref.Name+"/"+ref.Template]
	kept := t.Arguments.Parameters[:0]
	for _, p := range t.Arguments.Parameters {
		if d, ok := def[p.Name]; ok && p.Value != nil && p.Value.String() == d {
			continue
		}
		kept = append(kept, p)
	}
	t.Arguments.Parameters = kept
}
