package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/executor/internal/workflow"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/kube"
)

// pluginMissing ends an action whose run (plugin mode) found no deployctl
// plugin in its agent pod: every plugin node fails at once with Argo's
// "no plugin executed the template", before any step ran, so no
// Application was touched. The run is stopped (nothing else is tried),
// and the fix is the controller's configuration: exit 3. ok is false for
// any other follow error.
func (r *run) pluginMissing(ctx context.Context, w *wfv1.Workflow, err error) (code int, summary string, ok bool) {
	var pm *workflow.PluginMissing
	if !errors.As(err, &pm) {
		return 0, "", false
	}
	lg := r.log.Phase(PhaseFollow)
	if serr := workflow.Stop(ctx, r.cl, w); serr != nil {
		lg.Warn("cannot stop the run; its other nodes fail the same way", "workflow", w.Name, "error", serr.Error())
	} else {
		lg.Info("stopped the run: no plugin ran its nodes", "workflow", w.Name)
	}
	r.metrics.Error(PhaseFollow)
	r.report.Fail(componentExecutor, PhaseFollow, pm.Error())
	r.report.Recommend("%s", pluginFix(r.wfNamespace(), string(r.cfg.Action)))
	return exitcode.Invalid, fmt.Sprintf("%s; no step ran, no Application was touched; %s was stopped", pm.Error(), w.Name), true
}

// pluginFix is what to change when the agent has no deployctl plugin.
func pluginFix(ns, action string) string {
	return fmt.Sprintf("the workflow controller does not run the deployctl executor plugin: set ARGO_EXECUTOR_PLUGINS=true in the environment of the workflow-controller "+
		"Deployment's controller container and let it restart (`kubectl -n <controller namespace> set env deployment/workflow-controller ARGO_EXECUTOR_PLUGINS=true`; Helm chart: controller.extraEnv), "+
		"and check ConfigMap %s/%s exists labelled %s=%s (rbac/%s.yaml; the controller logs \"Executor plugin added\" when it loads it); "+
		"then run %s again (it resumes this run), or generate with spec.workflow.stepMode: pod",
		ns, compile.PluginConfigMap, compile.PluginConfigMapLabel, compile.PluginKind, compile.PluginConfigMap, action)
}

// tokenWait bounds awaitTokens: Kubernetes' token controller fills a new
// token Secret within milliseconds; longer means it will not (no such
// ServiceAccount, or the controller is off), and the agent pod says so.
var tokenWait = 30 * time.Second

// awaitTokens waits, after the apply of plugin mode's rbac/, until the
// token Secrets Argo mounts into the agent pod are filled (the token
// controller's service-account.uid annotation; metadata only): an agent
// pod started before would mount an empty Secret and fail its first start.
// Not filled in time is a warning, not a failure.
func (r *run) awaitTokens(ctx context.Context) {
	w := r.cfg.DAG.Platform.Spec.Workflow
	lg := r.log.Phase(PhaseApply)
	secrets := r.cl.Metadata.Resource(kube.GVRSecret).Namespace(w.Namespace)
	deadline := time.Now().Add(tokenWait)
	for _, sa := range []string{w.ServiceAccount, compile.PluginServiceAccount} {
		name := compile.TokenSecretName(sa)
		for {
			m, err := secrets.Get(ctx, name, metav1.GetOptions{})
			if err == nil && m.Annotations[corev1.ServiceAccountUIDKey] != "" {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				reason := "not filled"
				if err != nil {
					reason = err.Error()
				}
				lg.Warn("token Secret not ready: the agent pod may fail until Kubernetes fills it", "secret", w.Namespace+"/"+name, "reason", reason)
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(r.poll / 4):
			}
		}
	}
}
