package preflight

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/internal/safeyaml"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/report"
)

// Plugin mode (spec.workflow.stepMode: plugin) checks, in this order: the
// plugin's ConfigMap, the legacy token Secrets the agent pod mounts, and
// whether the workflow controller loads plugins at all.
const (
	CheckPlugin        = "executor-plugin"
	CheckPluginTokens  = "plugin-tokens"
	CheckPluginEnabled = "executor-plugins-enabled"
)

// PluginChecks are the names of the plugin-mode checks, for skipping them.
var PluginChecks = []string{CheckPlugin, CheckPluginTokens, CheckPluginEnabled}

// applies: this run applies rbac/ before it submits (deploy, teardown), so
// what rbac/ holds may be absent now.
func (r *checker) applies() bool {
	return (r.Action == report.ActionDeploy || r.Action == report.ActionTeardown) && !r.DryRun
}

// applyHint says how what is missing gets there.
func (r *checker) applyHint(file string) string {
	if r.applies() {
		return fmt.Sprintf("%s applies rbac/%s before it submits", r.Action, file)
	}
	return fmt.Sprintf("apply rbac/%s (deploy does, or `kubectl apply --server-side -k rbac/` as the generated README says)", file)
}

// checkPluginConfigMap wants the plugin declared in the workflow namespace
// as the controller loads it: the ExecutorPlugin label, a sidecar Argo
// accepts, the spec's image.
func (r *checker) checkPluginConfigMap(ctx context.Context) report.Check {
	c := report.Check{Name: CheckPlugin}
	ns := r.Platform.Spec.Workflow.Namespace
	file := compile.PluginConfigMap + ".yaml"
	where := fmt.Sprintf("ConfigMap %s/%s", ns, compile.PluginConfigMap)
	cm, err := r.Clients.Kube.CoreV1().ConfigMaps(ns).Get(ctx, compile.PluginConfigMap, metav1.GetOptions{})
	var problem string
	switch {
	case apierrors.IsNotFound(err):
		problem = where + " does not exist"
	case err != nil:
		c.Status, c.Reason = report.Warn, fmt.Sprintf("cannot read %s: %s", where, reasonOf(err))
		return c
	case cm.Labels[compile.PluginConfigMapLabel] != compile.PluginKind:
		problem = fmt.Sprintf("%s is not labelled %s=%s, so the controller does not load it", where, compile.PluginConfigMapLabel, compile.PluginKind)
	default:
		want := compile.PluginSidecar(r.Platform.Spec.Workflow)
		var got corev1.Container
		if err := safeyaml.UnmarshalJSON([]byte(cm.Data["sidecar.container"]), &got, yaml.DisallowUnknownFields); err != nil {
			problem = fmt.Sprintf("%s: sidecar.container is not a container: %v", where, err)
		} else if got.Image != want.Image || got.Name != want.Name {
			problem = fmt.Sprintf("%s runs container %s image %s, not %s image %s (another platform of namespace %s with another image? one image per namespace in plugin mode)",
				where, got.Name, got.Image, want.Name, want.Image, ns)
		} else if cm.Data["sidecar.automountServiceAccountToken"] != "true" {
			problem = where + ": sidecar.automountServiceAccountToken is not \"true\": the plugin could not read its workflow"
		}
	}
	if problem == "" {
		c.Status, c.Reason = report.Pass, where+" declares the plugin with image "+r.Platform.Spec.Workflow.Image
		return c
	}
	if r.applies() {
		c.Status, c.Reason = report.Warn, problem+"; "+r.applyHint(file)
		return c
	}
	c.Status, c.Code, c.Reason = report.Fail, exitcode.Invalid, problem+": "+r.applyHint(file)
	return c
}

// checkPluginTokens wants the legacy token Secrets of the workflow's and
// the plugin's ServiceAccounts present and filled by Kubernetes' token
// controller (it sets the service-account.uid annotation when it writes
// the token): read as metadata only, no token enters this process.
func (r *checker) checkPluginTokens(ctx context.Context) report.Check {
	c := report.Check{Name: CheckPluginTokens}
	ns := r.Platform.Spec.Workflow.Namespace
	var problems, ok []string
	for _, sa := range []string{r.Platform.Spec.Workflow.ServiceAccount, compile.PluginServiceAccount} {
		name := compile.TokenSecretName(sa)
		m, err := r.Clients.Metadata.Resource(kube.GVRSecret).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			problems = append(problems, fmt.Sprintf("Secret %s/%s (ServiceAccount %s's token, which Argo mounts into the agent pod) does not exist", ns, name, sa))
		case err != nil:
			c.Status, c.Reason = report.Warn, fmt.Sprintf("cannot check Secret %s/%s: %s", ns, name, reasonOf(err))
			return c
		case m.Annotations[corev1.ServiceAccountNameKey] != sa:
			problems = append(problems, fmt.Sprintf("Secret %s/%s is not annotated %s=%s", ns, name, corev1.ServiceAccountNameKey, sa))
		case m.Annotations[corev1.ServiceAccountUIDKey] == "":
			problems = append(problems, fmt.Sprintf("Secret %s/%s holds no token yet: Kubernetes fills it only while ServiceAccount %s/%s exists", ns, name, ns, sa))
		default:
			ok = append(ok, name)
		}
	}
	if len(problems) == 0 {
		c.Status, c.Reason = report.Pass, fmt.Sprintf("token Secrets %s present and filled", strings.Join(ok, ", "))
		return c
	}
	if r.applies() {
		c.Status, c.Reason = report.Warn, strings.Join(problems, "; ")+"; "+r.applyHint("")+" (the ServiceAccounts and their token Secrets)"
		return c
	}
	c.Status, c.Code, c.Reason = report.Fail, exitcode.Invalid, strings.Join(problems, "; ")+": "+r.applyHint("")+" (the ServiceAccounts and their token Secrets)"
	return c
}

// controllerSelectors find the workflow-controller Deployment as the
// upstream manifests and the Helm chart label it.
var controllerSelectors = []string{"app.kubernetes.io/component=workflow-controller", "app=workflow-controller"}

// checkPluginsEnabled reads the workflow-controller Deployment, when it may,
// for ARGO_EXECUTOR_PLUGINS=true or --executor-plugins: without either the
// agent pod has no plugin and every node fails with "no plugin executed the
// template". What cannot be read is a warning: the run will tell.
func (r *checker) checkPluginsEnabled(ctx context.Context) report.Check {
	c := report.Check{Name: CheckPluginEnabled}
	const runTells = `; the run will tell: its first node fails with "no plugin executed the template" if they are not`
	var found []appsv1.Deployment
	for _, sel := range controllerSelectors {
		list, err := r.Clients.Kube.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			c.Status, c.Reason = report.Warn, "cannot tell whether the workflow controller runs executor plugins (listing Deployments: "+reasonOf(err)+")"+runTells
			return c
		}
		if len(list.Items) > 0 {
			found = list.Items
			break
		}
	}
	if len(found) == 0 {
		c.Status, c.Reason = report.Warn, "cannot tell whether the workflow controller runs executor plugins: no workflow-controller Deployment ("+strings.Join(controllerSelectors, " or ")+")"+runTells
		return c
	}
	var off, unknown, on []string
	for _, d := range found {
		name := d.Namespace + "/" + d.Name
		switch enabled, why := pluginsEnabled(d); {
		case why != "":
			unknown = append(unknown, name+": "+why)
		case enabled:
			on = append(on, name)
		default:
			off = append(off, name)
		}
	}
	switch {
	case len(off) > 0:
		d := found[0]
		c.Status, c.Code = report.Fail, exitcode.Invalid
		c.Reason = fmt.Sprintf("executor plugins are off in Deployment %s (neither ARGO_EXECUTOR_PLUGINS=true nor --executor-plugins): set the environment variable on its controller container and let it restart: "+
			"`kubectl -n %s set env deployment/%s ARGO_EXECUTOR_PLUGINS=true` (Helm chart: controller.extraEnv), or generate with spec.workflow.stepMode: pod",
			strings.Join(off, ", "), d.Namespace, d.Name)
	case len(unknown) > 0:
		c.Status, c.Reason = report.Warn, "cannot tell whether executor plugins are on: "+strings.Join(unknown, "; ")+runTells
	default:
		c.Status, c.Reason = report.Pass, "executor plugins are on in Deployment "+strings.Join(on, ", ")
	}
	return c
}

// pluginsEnabled reads a controller Deployment's container as Argo's
// controller reads its own flags (viper: --executor-plugins, or the
// ARGO_EXECUTOR_PLUGINS variable when the flag is not given). why is set
// when the answer is not in the Deployment (a variable from a reference).
func pluginsEnabled(d appsv1.Deployment) (enabled bool, why string) {
	var ctr *corev1.Container
	cs := d.Spec.Template.Spec.Containers
	for i := range cs {
		if cs[i].Name == "workflow-controller" || ctr == nil {
			ctr = &cs[i]
		}
	}
	if ctr == nil {
		return false, "no container"
	}
	args := append(append([]string(nil), ctr.Command...), ctr.Args...)
	for _, a := range args {
		switch {
		case a == "--executor-plugins":
			return true, ""
		case strings.HasPrefix(a, "--executor-plugins="):
			v, err := strconv.ParseBool(strings.TrimPrefix(a, "--executor-plugins="))
			if err != nil {
				return false, fmt.Sprintf("argument %q is not a boolean", a)
			}
			return v, ""
		}
	}
	for _, e := range ctr.Env {
		if e.Name != "ARGO_EXECUTOR_PLUGINS" {
			continue
		}
		if e.ValueFrom != nil {
			return false, "ARGO_EXECUTOR_PLUGINS comes from a reference"
		}
		v, err := strconv.ParseBool(e.Value)
		if err != nil {
			return false, fmt.Sprintf("ARGO_EXECUTOR_PLUGINS=%q is not a boolean", e.Value)
		}
		return v, ""
	}
	if len(ctr.EnvFrom) > 0 {
		return false, "its environment also comes from ConfigMaps or Secrets (envFrom)"
	}
	return false, ""
}
