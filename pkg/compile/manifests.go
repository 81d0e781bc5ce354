package compile

import (
	"fmt"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/spec"
)

// The deploy's Applications live in ConfigMaps beside its WorkflowTemplate,
// not in it (issue 24): a deploy task names its Application's key with
// Argo's `valueFrom.configMapKeyRef`, which the workflow-controller
// resolves when the node starts, so the step still gets its
// `manifest-base64` (the same value: base64 JSON, no user text in an Argo
// expression), while the WorkflowTemplate — and the copy of its spec every
// Workflow keeps in its status — holds about a third of the bytes per app.
// Argo reads only ConfigMaps of the workflow's namespace labelled
// workflows.argoproj.io/configmap-type=Parameter.
const (
	// LabelArgoConfigMapType and ArgoConfigMapParameter: the label Argo's
	// workflow-controller watches ConfigMaps by (workflow/common).
	LabelArgoConfigMapType = "workflows.argoproj.io/configmap-type"
	ArgoConfigMapParameter = "Parameter"
)

// ManifestBudget is how many bytes of keys and values one ConfigMap of
// Applications holds at most: under the API's 1 MiB per ConfigMap and
// render.MaxObjectBytes per generated file, with room for its YAML. A
// package variable so tests can split small platforms.
var ManifestBudget = 768 * 1024

// ApplicationsConfigMapName is the k-th (1, 2, …) ConfigMap of a
// platform's deploy Applications.
func ApplicationsConfigMapName(platform string, k int) string {
	return fmt.Sprintf("%s-deploy-applications-%d", platform, k)
}

// manifestStore fills the deploy's ConfigMaps in task order, starting the
// next one when an entry would pass ManifestBudget; emit gets each when it
// is full (and the last from flush), so a streaming compile holds one.
type manifestStore struct {
	p    *spec.Platform
	hash string
	emit func(*corev1.ConfigMap) error
	cur  *corev1.ConfigMap
	size int
	k    int
}

// put stores one task's manifest under the task's name and returns the
// argument that reads it back.
func (s *manifestStore) put(task, value string) (wfv1.Parameter, error) {
	n := len(task) + len(value)
	if s.cur != nil && s.size+n > ManifestBudget {
		if err := s.flush(); err != nil {
			return wfv1.Parameter{}, err
		}
	}
	if s.cur == nil {
		s.k++
		s.size = 0
		s.cur = &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{
				Name:      ApplicationsConfigMapName(s.p.Metadata.Name, s.k),
				Namespace: s.p.Spec.Workflow.Namespace,
				Labels: map[string]string{
					LabelArgoConfigMapType: ArgoConfigMapParameter,
					LabelPlatform:          s.p.Metadata.Name,
					LabelAction:            "deploy",
					LabelSpecHash:          s.hash,
					LabelManagedBy:         ManagedBy,
				},
			},
			Data: map[string]string{},
		}
	}
	s.cur.Data[task] = value
	s.size += n
	return wfv1.Parameter{
		Name: manifestInput,
		ValueFrom: &wfv1.ValueFrom{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: s.cur.Name},
			Key:                  task,
		}},
	}, nil
}

// flush hands the ConfigMap being filled to emit.
func (s *manifestStore) flush() error {
	if s.cur == nil {
		return nil
	}
	cm := s.cur
	s.cur = nil
	return s.emit(cm)
}

// manifestInput is sync-and-wait's input that takes the Application.
const manifestInput = "manifest-base64"

// fromStore moves a deploy task's manifest argument into the store.
func fromStore(t wfv1.DAGTask, s *manifestStore) (wfv1.DAGTask, error) {
	for i, p := range t.Arguments.Parameters {
		if p.Name != manifestInput || p.Value == nil {
			continue
		}
		ref, err := s.put(t.Name, p.Value.String())
		if err != nil {
			return t, err
		}
		t.Arguments.Parameters[i] = ref
		return t, nil
	}
	return t, fmt.Errorf("internal: task %s has no %s argument", t.Name, manifestInput)
}
