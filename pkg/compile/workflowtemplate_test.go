package compile

import (
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// Every WorkflowTemplate runs its pods as non-root 65532 under the runtime's
// seccomp profile (Argo's init and wait containers included), as the
// platform's ServiceAccount, at the spec's parallelism, without fail-fast
// (an independent branch finishes when another fails), and keeps failed
// runs longer than successful ones so `argo retry` stays possible.
func TestWorkflowTemplateSkeleton(t *testing.T) {
	out := shop(t)
	for _, a := range Actions {
		wt := out.WorkflowTemplates[a]
		s := wt.Spec
		sc := s.SecurityContext
		if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != 65532 ||
			sc.RunAsGroup == nil || *sc.RunAsGroup != 65532 || sc.FSGroup == nil || *sc.FSGroup != 65532 ||
			sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: pod security context %+v", a, sc)
		}
		if s.ServiceAccountName != "deployctl" || wt.Namespace != "argo" || wt.Name != "shop-"+string(a) {
			t.Errorf("%s: %s/%s runs as %q", a, wt.Namespace, wt.Name, s.ServiceAccountName)
		}
		if s.Parallelism == nil || *s.Parallelism != 3 {
			t.Errorf("%s: parallelism %v, want 3", a, s.Parallelism)
		}
		if ff := s.Templates[0].DAG.FailFast; ff == nil || *ff {
			t.Errorf("%s: failFast %v, want false", a, ff)
		}
		if s.PodGC == nil || s.PodGC.Strategy != wfv1.PodGCOnPodSuccess {
			t.Errorf("%s: podGC %+v, want OnPodSuccess", a, s.PodGC)
		}
		if ttl := s.TTLStrategy; ttl == nil || *ttl.SecondsAfterFailure <= *ttl.SecondsAfterSuccess {
			t.Errorf("%s: TTL %+v keeps failed runs no longer than successful ones", a, ttl)
		}
		if wt.Labels[LabelSpecHash] != out.SpecHash || wt.Labels[LabelAction] != string(a) || s.WorkflowMetadata.Labels[LabelPlatform] != "shop" {
			t.Errorf("%s: labels %v, workflow labels %v", a, wt.Labels, s.WorkflowMetadata.Labels)
		}
		if wf := out.Workflows[a]; wf.Spec.WorkflowTemplateRef == nil || wf.Spec.WorkflowTemplateRef.Name != wt.Name || wf.GenerateName != wt.Name+"-" {
			t.Errorf("%s: the Workflow does not run its WorkflowTemplate: %+v", a, wf.Spec.WorkflowTemplateRef)
		}
	}
}

// The retry arguments compile passes reach Argo's retryStrategy: every
// ClusterWorkflowTemplate that takes them retries by them, and only on the
// step's transient exit code (75).
func TestRetryStrategyReadsTheTaskArguments(t *testing.T) {
	out := shop(t)
	for _, c := range out.ClusterTemplates {
		for _, tmpl := range c.Spec.Templates {
			if tmpl.Container == nil {
				continue
			}
			r := tmpl.RetryStrategy
			if r == nil || r.Backoff == nil {
				t.Errorf("%s/%s has no retryStrategy with backoff", c.Name, tmpl.Name)
				continue
			}
			if r.Limit.String() != "{{inputs.parameters.retry-limit}}" || r.Backoff.Duration != "{{inputs.parameters.retry-backoff}}" || r.Backoff.Factor.String() != "{{inputs.parameters.retry-factor}}" {
				t.Errorf("%s/%s retries by %s, %s, %s, not by the task's retry-* arguments", c.Name, tmpl.Name, r.Limit.String(), r.Backoff.Duration, r.Backoff.Factor.String())
			}
			if r.Expression != "asInt(lastRetry.exitCode) == 75" {
				t.Errorf("%s/%s retries on %q, want only the transient exit code 75", c.Name, tmpl.Name, r.Expression)
			}
		}
	}
}

// One run of a platform at a time: the deploy and the teardown, in both
// step modes and every scope, hold the same namespaced mutex named after
// the platform, through the list field Argo Workflows v3.7 and v4 both
// read (spec.synchronization.mutexes); validate, read-only, holds none.
// A second run submitted meanwhile waits Pending on it (Argo's queue).
func TestDeployAndTeardownHoldThePlatformMutex(t *testing.T) {
	for _, mode := range []spec.StepMode{spec.StepModePod, spec.StepModePlugin} {
		for _, scope := range []string{"platform", "stack:apps", "app:db"} {
			d, err := dag.Load("testdata/shop.yaml")
			if err != nil {
				t.Fatal(err)
			}
			d.Platform.Spec.Workflow.StepMode = mode
			out, err := Compile(d, scope)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range Actions {
				s := out.WorkflowTemplates[a].Spec.Synchronization
				if a == dag.Validate {
					if s != nil {
						t.Errorf("%s %s %s: validate holds %+v, want no lock", mode, scope, a, s)
					}
					continue
				}
				if s == nil || len(s.Mutexes) != 1 || len(s.Semaphores) != 0 {
					t.Errorf("%s %s %s: synchronization %+v, want exactly one mutex", mode, scope, a, s)
					continue
				}
				m := s.Mutexes[0]
				if m.Name != "deployctl-shop" || m.Name != MutexName("shop") || m.Namespace != "" || m.Database {
					t.Errorf("%s %s %s: mutex %+v, want deployctl-shop in the workflow's namespace", mode, scope, a, *m)
				}
			}
		}
	}
}
