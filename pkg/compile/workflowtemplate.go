package compile

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// Failed runs are kept a week so `argo retry` (resume) stays possible;
// successful ones a day. Pods of successful steps are deleted at once, those
// of failed steps kept for their logs until the workflow goes.
const (
	ttlAfterSuccess = 24 * 60 * 60
	ttlAfterFailure = 7 * 24 * 60 * 60
)

// connectionParams are the workflow-level parameters every step template
// reads (stepcontract.WorkflowParams): how to reach Argo CD.
func connectionParams(p *spec.Platform) []wfv1.Parameter {
	a := p.Spec.ArgoCD
	ca := caSecretOf(a)
	values := map[string]string{
		"argocd-server":                      a.Server,
		stepcontract.WorkflowArgoCDNamespace: a.Namespace,
		"argocd-plaintext":                   strconv.FormatBool(a.Plaintext),
		"argocd-insecure-skip-verify":        strconv.FormatBool(a.InsecureSkipVerify),
		"argocd-root-path":                   a.RootPath,
		stepcontract.WorkflowTokenSecret:     a.TokenSecret.Name,
		stepcontract.WorkflowTokenKey:        a.TokenSecret.Key,
		stepcontract.WorkflowCASecret:        ca.secret,
		stepcontract.WorkflowCAKey:           ca.key,
		"argocd-ca-file":                     ca.file,
	}
	out := make([]wfv1.Parameter, len(stepcontract.WorkflowParams))
	for i, w := range stepcontract.WorkflowParams {
		v, ok := values[w.Name]
		if !ok {
			panic("compile: no value for the step templates' workflow parameter " + w.Name)
		}
		out[i] = param(w.Name, v)
	}
	return out
}

// caSecretRef is the CA bundle's secret, key and path in the step.
type caSecretRef struct{ secret, key, file string }

// caSecretOf: without a CA secret the (optional) CA volume names a
// placeholder and the step uses the system roots.
func caSecretOf(a spec.ArgoCD) caSecretRef {
	ca := caSecretRef{"deployctl-argocd-ca", "ca.crt", ""}
	if a.CASecret != nil {
		ca.secret, ca.file = a.CASecret.Name, caMount+"/ca.crt"
		if a.CASecret.Key != "" {
			ca.key = a.CASecret.Key
		}
	}
	return ca
}

// caMount is where the step pods and the plugin sidecar mount the CA bundle.
const caMount = "/var/run/secrets/argocd-ca"

func param(name, value string) wfv1.Parameter {
	return wfv1.Parameter{Name: name, Value: wfv1.AnyStringPtr(value)}
}

// workflowTemplate is the skeleton shared by deploy, teardown and validate:
// main's tasks are streamed apart (see Stream); join says whether one of
// them is a join, which needs the pod-less join template.
func workflowTemplate(p *spec.Platform, action, hash string, extra []wfv1.Parameter, main wfv1.Template, join bool) *wfv1.WorkflowTemplate {
	name := WorkflowTemplateName(p.Metadata.Name, action)
	labels := map[string]string{
		LabelPlatform:  p.Metadata.Name,
		LabelAction:    action,
		LabelSpecHash:  hash,
		LabelManagedBy: ManagedBy,
	}
	parallelism := int64(p.Spec.Workflow.Parallelism)
	failFast := false
	main.DAG.FailFast = &failFast
	templates := []wfv1.Template{main}
	if join {
		templates = append(templates, wfv1.Template{
			Name:    tmplJoin,
			Suspend: &wfv1.SuspendTemplate{Duration: "0"},
		})
	}
	return &wfv1.WorkflowTemplate{
		TypeMeta: metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "WorkflowTemplate"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: p.Spec.Workflow.Namespace,
			Labels:    labels,
		},
		Spec: wfv1.WorkflowSpec{
			Entrypoint:         action,
			ServiceAccountName: p.Spec.Workflow.ServiceAccount,
			Parallelism:        &parallelism,
			Arguments:          wfv1.Arguments{Parameters: append(connectionParams(p), extra...)},
			WorkflowMetadata:   &wfv1.WorkflowMetadata{Labels: labels},
			PodGC:              &wfv1.PodGC{Strategy: wfv1.PodGCOnPodSuccess},
			TTLStrategy:        &wfv1.TTLStrategy{SecondsAfterSuccess: ptr(int32(ttlAfterSuccess)), SecondsAfterFailure: ptr(int32(ttlAfterFailure))},
			SecurityContext:    podSecurity(),
			Synchronization:    synchronization(p.Metadata.Name, action),
			Templates:          templates,
		},
	}
}

// MutexName is the Argo Workflows mutex a platform's deploy and teardown
// runs hold: one run of a platform at a time (two would race on the same
// apps). It lives in the workflow namespace (Mutex.Namespace empty: the
// namespace of the Workflow), so platforms of other namespaces never share
// it. The deploy and teardown of any scope take the same mutex.
func MutexName(platform string) string { return spec.ReservedPrefix + platform }

// synchronization holds the platform's mutex for the whole run of a deploy
// or a teardown; validate only reads and takes none. A run submitted while
// another holds it stays Pending ("Waiting for … lock") and starts when the
// other ends, in creation order (Argo's queue): a push during a deploy still
// deploys its commit after it. spec.synchronization.mutexes, not the older
// singular mutex: Argo Workflows v3.6 added the list, v4 removed the
// singular field, and both v3.7 and v4 accept the list.
func synchronization(platform, action string) *wfv1.Synchronization {
	if action != string(dag.Deploy) && action != string(dag.Teardown) {
		return nil
	}
	return &wfv1.Synchronization{Mutexes: []*wfv1.Mutex{{Name: MutexName(platform)}}}
}

// podSecurity is the workflow-wide pod security context (the CWTs set their
// own too): applies to every pod, including Argo's init and wait containers.
func podSecurity() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr(true),
		RunAsUser:      ptr(int64(65532)),
		RunAsGroup:     ptr(int64(65532)),
		FSGroup:        ptr(int64(65532)),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func ptr[T any](v T) *T { return &v }

// depends renders an Argo `depends` expression requiring every named task to
// have Succeeded. Plain names would also accept Skipped and Daemoned.
func depends(tasks []string) string {
	parts := make([]string, len(tasks))
	for i, t := range tasks {
		parts[i] = t + ".Succeeded"
	}
	sort.Strings(parts)
	return strings.Join(parts, " && ")
}

// joinTask is a stack's pod-less join: done when its dependencies are.
func joinTask(name string, deps []string) wfv1.DAGTask {
	return wfv1.DAGTask{Name: name, Template: tmplJoin, Depends: depends(deps)}
}

// retryOf is an app's retry policy as the step templates' retryStrategy
// takes it.
func retryOf(r *spec.Retry) stepcontract.Retry {
	return stepcontract.Retry{Limit: r.Limit, Backoff: r.Backoff.Duration, Factor: max(r.Factor, 1)}
}

// eachTask makes one task per node of g in stable (topological) order and
// hands each to emit: a join for a stack, app(n, deps) for an app.
func eachTask(d *dag.DAG, g interface {
	TopoOrder() ([]string, error)
	Deps(string) []string
}, app func(n *dag.Node, deps []string) (wfv1.DAGTask, error), emit func(wfv1.DAGTask) error) error {
	order, err := g.TopoOrder()
	if err != nil {
		return err
	}
	for _, name := range order {
		n := d.Node(name)
		deps := g.Deps(name)
		var t wfv1.DAGTask
		if n.Kind == dag.Stack {
			t = joinTask(name, deps)
		} else if t, err = app(n, deps); err != nil {
			return err
		}
		if err := emit(t); err != nil {
			return err
		}
	}
	return nil
}

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }
