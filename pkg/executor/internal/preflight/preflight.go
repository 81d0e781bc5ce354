// Package preflight is the executor's Phase 0: strictly read-only checks
// of the cluster before an action changes anything, and the cluster
// inventory they find.
package preflight

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/executor/internal/apply"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/healthlua"
	"github.com/deployctl/deployctl/pkg/kube"
	"github.com/deployctl/deployctl/pkg/report"
	"github.com/deployctl/deployctl/pkg/spec"
	"github.com/deployctl/deployctl/pkg/step"
)

// Phase 0 preflight: strictly read-only. Every check reads, or asks the
// API server a question that persists nothing (SelfSubjectReview,
// SelfSubjectAccessReview, server-side dry-run apply).

// permission is one thing an action must be allowed to do.
type permission struct {
	verbs     []string
	group     string
	resource  string
	namespace string // "" for cluster scope
}

// permissions lists what an action calls, per verb (RFC 3.2.4, docs/requirements.md#rfc-324-required-cluster-state: "RBAC
// check for required permissions").
func (r *checker) permissions() []permission {
	p := r.Platform
	wf, cd := p.Spec.Workflow.Namespace, p.Spec.ArgoCD.Namespace
	apps := permission{[]string{"get", "list"}, "argoproj.io", "applications", cd}
	if r.Action == report.ActionValidate {
		return []permission{apps}
	}
	apply := []string{"get", "create", "patch"}
	ps := []permission{
		{apply, "argoproj.io", "clusterworkflowtemplates", ""},
		{apply, "argoproj.io", "workflowtemplates", wf},
		{[]string{"get", "list", "watch", "create", "update"}, "argoproj.io", "workflows", wf},
		{apply, "", "serviceaccounts", wf},
		{apply, "rbac.authorization.k8s.io", "roles", wf},
		{apply, "rbac.authorization.k8s.io", "rolebindings", wf},
		{apply, "", "configmaps", cd},
		apps,
	}
	if r.Action != report.ActionTeardown {
		// resume deletes the pods of the nodes it resets, as `argo retry` does
		ps = append(ps, permission{[]string{"delete"}, "", "pods", wf})
	}
	if p.Spec.Workflow.StepMode.Plugin() {
		// rbac/ holds the plugin's ConfigMap and two token Secrets there
		ps = append(ps, permission{apply, "", "configmaps", wf})
	}
	if r.HasSecrets || p.Spec.Workflow.StepMode.Plugin() {
		ps = append(ps, permission{apply, "", "secrets", wf})
	} else {
		ps = append(ps, permission{[]string{"get"}, "", "secrets", wf})
	}
	return ps
}

// Input is what preflight reads besides the cluster.
type Input struct {
	Action   report.Action
	Platform *spec.Platform
	Clients  *kube.Clients
	DryRun   bool
	// HasSecrets: the secrets directory holds credentials to apply;
	// HasToken: among them the Argo CD token, file TokenFile of SecretsDir.
	HasSecrets, HasToken  bool
	SecretsDir, TokenFile string
	// Objects are what the action applies (checked by a dry-run apply).
	Objects []apply.Object
	Log     *slog.Logger
}

type checker struct {
	Input
	inventory report.Inventory
}

// Run runs every check, in order (a check that cannot be meaningful after
// an earlier failure is skipped with the reason), and returns them with the
// inventory of the cluster.
func Run(ctx context.Context, in Input) ([]report.Check, report.Inventory) {
	r := &checker{Input: in}
	return r.run(ctx), r.inventory
}

func (r *checker) run(ctx context.Context) []report.Check {
	lg := r.Log
	var checks []report.Check
	add := func(c report.Check) {
		checks = append(checks, c)
		lv := map[string]func(string, ...any){report.Pass: lg.Info, report.Warn: lg.Warn, report.Fail: lg.Error, report.Skip: lg.Info}[c.Status]
		lv("check "+c.Name, "status", c.Status, "reason", c.Reason)
	}
	plugin := r.Platform.Spec.Workflow.StepMode.Plugin() && r.Action != report.ActionValidate
	skip := func(reason string, names ...string) {
		if plugin {
			names = append(names, PluginChecks...)
		}
		for _, n := range names {
			add(report.Check{Name: n, Status: report.Skip, Reason: reason})
		}
	}
	api := r.checkAPI(ctx)
	add(api)
	if api.Status == report.Fail {
		skip("the API server is not reachable", "credentials", "permissions", "nodes", "dns", "argo-cd", "argo-workflows", "argocd-token", "templates")
		return checks
	}
	creds := r.checkCredentials(ctx)
	add(creds)
	if creds.Status == report.Fail {
		skip("the credentials were not accepted", "permissions", "nodes", "dns", "argo-cd", "argo-workflows", "argocd-token", "templates")
		return checks
	}
	add(r.checkPermissions(ctx))
	add(r.checkNodes(ctx))
	add(r.checkDNS(ctx))
	add(r.checkArgoCD(ctx))
	if r.Action == report.ActionValidate {
		return checks
	}
	wfc := r.checkArgoWorkflows(ctx)
	add(wfc)
	add(r.checkToken(ctx))
	if wfc.Status == report.Fail && wfc.Code == exitcode.Invalid {
		add(report.Check{Name: "templates", Status: report.Skip, Reason: "Argo Workflows' CRDs are missing"})
	} else {
		add(r.checkTemplates(ctx))
	}
	if r.Action == report.ActionDeploy || r.Action == report.ActionPreflight {
		add(r.checkHealthCustomizations(ctx))
	}
	if plugin {
		add(r.checkPluginConfigMap(ctx))
		add(r.checkPluginTokens(ctx))
		add(r.checkPluginsEnabled(ctx))
	}
	return checks
}

// Code is the exit code of a failed preflight: 3 when any failure
// is missing configuration or primitives (fix the setup), else 1; 0 when
// nothing failed.
func Code(checks []report.Check) int {
	code := exitcode.OK
	for _, c := range checks {
		if c.Status != report.Fail {
			continue
		}
		if c.Code == exitcode.Invalid {
			return exitcode.Invalid
		}
		code = exitcode.Failure
	}
	return code
}

func (r *checker) checkAPI(ctx context.Context) report.Check {
	c := report.Check{Name: "api"}
	v, err := r.Clients.Kube.Discovery().ServerVersion()
	switch {
	case apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err):
		// It answered: reachable. The credentials check says the rest.
		c.Status, c.Reason = report.Pass, "the API server answered ("+reasonOf(err)+")"
	case err != nil:
		c.Status, c.Reason, c.Code = report.Fail, "not reachable: "+err.Error(), exitcode.Failure
	default:
		r.inventory.ServerVersion = v.GitVersion
		c.Status, c.Reason = report.Pass, "Kubernetes "+v.GitVersion
	}
	return c
}

func (r *checker) checkCredentials(ctx context.Context) report.Check {
	c := report.Check{Name: "credentials"}
	res, err := r.Clients.Kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case apierrors.IsUnauthorized(err):
		c.Status, c.Reason, c.Code = report.Fail, "the API server rejected the kubeconfig's credentials (401)", exitcode.Invalid
	case apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err):
		c.Status, c.Reason = report.Pass, "accepted (identity not available: "+reasonOf(err)+")"
	case err != nil:
		c.Status, c.Reason, c.Code = report.Fail, err.Error(), exitcode.Failure
	default:
		u := res.Status.UserInfo
		r.inventory.User = u.Username
		c.Status, c.Reason = report.Pass, fmt.Sprintf("authenticated as %s (groups %s)", u.Username, strings.Join(u.Groups, ", "))
	}
	return c
}

func (r *checker) checkPermissions(ctx context.Context) report.Check {
	c := report.Check{Name: "permissions"}
	var denied []string
	asked := 0
	for _, p := range r.permissions() {
		for _, verb := range p.verbs {
			asked++
			ra := &authzv1.ResourceAttributes{Verb: verb, Group: p.group, Resource: p.resource, Namespace: p.namespace}
			res, err := r.Clients.Kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
				&authzv1.SelfSubjectAccessReview{Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: ra}}, metav1.CreateOptions{})
			if err != nil {
				c.Status, c.Reason, c.Code = report.Fail, "SelfSubjectAccessReview: "+err.Error(), exitcode.Failure
				return c
			}
			if !res.Status.Allowed {
				denied = append(denied, describePermission(verb, p))
			}
		}
	}
	if len(denied) > 0 {
		c.Status, c.Code = report.Fail, exitcode.Invalid
		c.Reason = fmt.Sprintf("%d of %d denied: %s", len(denied), asked, strings.Join(denied, "; "))
		return c
	}
	what := r.Action
	if what == report.ActionPreflight {
		what = report.ActionDeploy // preflight checks for deploy
	}
	c.Status, c.Reason = report.Pass, fmt.Sprintf("all %d verbs %s needs are allowed", asked, what)
	return c
}

func describePermission(verb string, p permission) string {
	res := p.resource
	if p.group != "" {
		res += "." + p.group
	}
	if p.namespace == "" {
		return verb + " " + res + " (cluster)"
	}
	return fmt.Sprintf("%s %s in %s", verb, res, p.namespace)
}

func (r *checker) checkNodes(ctx context.Context) report.Check {
	c := report.Check{Name: "nodes"}
	nodes, err := r.Clients.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		c.Status, c.Reason, c.Code = report.Fail, "listing nodes: "+err.Error(), exitcode.Failure
		return c
	}
	inv := &r.inventory
	cpu, mem := resource.Quantity{}, resource.Quantity{}
	versions := map[string]bool{}
	for _, n := range nodes.Items {
		inv.Nodes++
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				inv.ReadyNodes++
			}
		}
		versions[n.Status.NodeInfo.KubeletVersion] = true
		cpu.Add(n.Status.Allocatable[corev1.ResourceCPU])
		mem.Add(n.Status.Allocatable[corev1.ResourceMemory])
	}
	for v := range versions {
		inv.KubeletVersions = append(inv.KubeletVersions, v)
	}
	sort.Strings(inv.KubeletVersions)
	inv.CPU, inv.Memory = cpu.String(), mem.String()
	switch {
	case inv.ReadyNodes == 0:
		c.Status, c.Reason, c.Code = report.Fail, fmt.Sprintf("no Ready node (%d nodes)", inv.Nodes), exitcode.Failure
	case inv.ReadyNodes < 3:
		c.Status, c.Reason = report.Warn, fmt.Sprintf("%d of %d nodes Ready; fewer than 3 (a warning only: docs/requirements.md#rfc-324-required-cluster-state)", inv.ReadyNodes, inv.Nodes)
	default:
		c.Status, c.Reason = report.Pass, fmt.Sprintf("%d of %d nodes Ready", inv.ReadyNodes, inv.Nodes)
	}
	return c
}

// checkDNS wants CoreDNS (or kube-dns) pods running; a cluster DNS served
// from outside pods (host process, managed service) shows as the kube-dns
// Service with ready endpoints: a warning, since the pods cannot be seen.
func (r *checker) checkDNS(ctx context.Context) report.Check {
	c := report.Check{Name: "dns"}
	pods, err := r.Clients.Kube.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=kube-dns"})
	if err != nil {
		c.Status, c.Reason, c.Code = report.Fail, "listing DNS pods: "+err.Error(), exitcode.Failure
		return c
	}
	if ready, total := readyPods(pods.Items); ready > 0 {
		c.Status, c.Reason = report.Pass, fmt.Sprintf("%d/%d cluster DNS pods (k8s-app=kube-dns) Running and Ready", ready, total)
		return c
	} else if total > 0 {
		c.Status, c.Reason, c.Code = report.Fail, fmt.Sprintf("0/%d cluster DNS pods (k8s-app=kube-dns) Ready", total), exitcode.Failure
		return c
	}
	n, err := r.readyEndpoints(ctx, "kube-system", "kube-dns")
	switch {
	case err != nil:
		c.Status, c.Reason, c.Code = report.Fail, "no CoreDNS pods (k8s-app=kube-dns in kube-system) and no kube-dns Service: "+err.Error(), exitcode.Failure
	case n == 0:
		c.Status, c.Reason, c.Code = report.Fail, "no CoreDNS pods, and the kube-dns Service has no ready endpoint", exitcode.Failure
	default:
		c.Status, c.Reason = report.Warn, fmt.Sprintf("no CoreDNS pods, but the kube-dns Service has %d ready endpoint(s): DNS served outside pods (host process or external)", n)
	}
	return c
}

// argoCDComponents are found by the standard label app.kubernetes.io/name.
var argoCDComponents = []string{"argocd-server", "argocd-repo-server", "argocd-application-controller"}

// checkArgoCD wants the Application CRD and the three Argo CD components'
// pods Ready. Without pods (host-process install, or outside the cluster)
// the CRD and the argocd-server Service's endpoints are the evidence left:
// a warning.
func (r *checker) checkArgoCD(ctx context.Context) report.Check {
	c := report.Check{Name: "argo-cd"}
	ns := r.Platform.Spec.ArgoCD.Namespace
	if missing, err := r.missingResources("argoproj.io/v1alpha1", "applications"); err != nil || len(missing) > 0 {
		c.Status, c.Code = report.Fail, exitcode.Invalid
		c.Reason = "Argo CD is not installed: no applications.argoproj.io API" + suffix(err)
		return c
	}
	var notReady, noPods, ok []string
	var running []corev1.Pod
	for _, comp := range argoCDComponents {
		pods, err := r.Clients.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + comp})
		if err != nil {
			c.Status, c.Reason, c.Code = report.Fail, "listing Argo CD pods: "+err.Error(), exitcode.Failure
			return c
		}
		running = append(running, pods.Items...)
		ready, total := readyPods(pods.Items)
		switch {
		case total == 0:
			noPods = append(noPods, comp)
		case ready == 0:
			notReady = append(notReady, fmt.Sprintf("%s 0/%d Ready", comp, total))
		default:
			ok = append(ok, fmt.Sprintf("%s %d/%d", comp, ready, total))
		}
	}
	switch {
	case len(notReady) > 0:
		c.Status, c.Code = report.Fail, exitcode.Failure
		c.Reason = "in " + ns + ": " + strings.Join(notReady, ", ")
	case len(noPods) == 0:
		c.Status, c.Reason = report.Pass, "in "+ns+": "+strings.Join(ok, ", ")+" Ready"
		v := imageVersion(running, "argocd")
		noteSupport(&c, "Argo CD", v)
		newerFields(&c, r.Platform, v)
	default:
		n, err := r.readyEndpoints(ctx, ns, "argocd-server")
		ev := "the argocd-server Service has no ready endpoint" + suffix(err)
		if err == nil && n > 0 {
			ev = fmt.Sprintf("the argocd-server Service has %d ready endpoint(s)", n)
		}
		c.Status = report.Warn
		c.Reason = fmt.Sprintf("no pods labelled app.kubernetes.io/name=%s in %s (host-process or external install?); the Application CRD is present and %s",
			strings.Join(noPods, "|"), ns, ev)
		newerFields(&c, r.Platform, "")
	}
	return c
}

// workflowCRDs are what the generated manifests and the executor use.
var workflowCRDs = []string{"workflows", "workflowtemplates", "clusterworkflowtemplates", "workflowtaskresults"}

// checkArgoWorkflows wants the CRDs and a Ready controller. The controller
// is found by the labels of the upstream manifests and of the Helm chart;
// without pods its ConfigMap is the evidence left of a host-process or
// external controller: a warning.
func (r *checker) checkArgoWorkflows(ctx context.Context) report.Check {
	c := report.Check{Name: "argo-workflows"}
	missing, err := r.missingResources("argoproj.io/v1alpha1", workflowCRDs...)
	if err != nil || len(missing) > 0 {
		c.Status, c.Code = report.Fail, exitcode.Invalid
		c.Reason = "Argo Workflows is not installed: missing " + strings.Join(missing, ", ") + " (argoproj.io/v1alpha1)" + suffix(err)
		return c
	}
	for _, sel := range []string{"app.kubernetes.io/component=workflow-controller", "app=workflow-controller"} {
		pods, err := r.Clients.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			c.Status, c.Reason = report.Warn, "CRDs present; cannot look for the controller's pods: "+reasonOf(err)
			return c
		}
		if ready, total := readyPods(pods.Items); total > 0 {
			if ready == 0 {
				c.Status, c.Reason, c.Code = report.Fail, fmt.Sprintf("workflow-controller 0/%d Ready (%s)", total, sel), exitcode.Failure
			} else {
				c.Status, c.Reason = report.Pass, fmt.Sprintf("CRDs present; workflow-controller %d/%d Ready in %s", ready, total, pods.Items[0].Namespace)
				noteSupport(&c, "Argo Workflows", imageVersion(pods.Items, "workflow-controller"))
			}
			return c
		}
	}
	c.Status = report.Warn
	c.Reason = "CRDs present; no workflow-controller pods (host-process or external controller?)"
	if cms, err := r.Clients.Kube.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=workflow-controller-configmap"}); err == nil && len(cms.Items) > 0 {
		c.Reason += "; its workflow-controller-configmap is in " + cms.Items[0].Namespace
	}
	return c
}

// checkToken wants the Argo CD token Secret the step pods mount, looked up
// as metadata only: its content never enters this process.
func (r *checker) checkToken(ctx context.Context) report.Check {
	c := report.Check{Name: "argocd-token"}
	p := r.Platform
	ref := p.Spec.ArgoCD.TokenSecret
	ns := p.Spec.Workflow.Namespace
	if r.HasToken {
		c.Status, c.Reason = report.Pass, fmt.Sprintf("will be applied as Secret %s/%s from the secrets directory", ns, ref.Name)
		return c
	}
	_, err := r.Clients.Metadata.Resource(kube.GVRSecret).Namespace(ns).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		c.Status, c.Code = report.Fail, exitcode.Invalid
		c.Reason = fmt.Sprintf("Secret %s/%s (the Argo CD API token the workflow pods mount) does not exist: create it, or mount the token as %s/%s",
			ns, ref.Name, r.SecretsDir, r.TokenFile)
	case err != nil:
		c.Status, c.Reason = report.Warn, fmt.Sprintf("cannot check Secret %s/%s: %s", ns, ref.Name, reasonOf(err))
	default:
		c.Status, c.Reason = report.Pass, fmt.Sprintf("Secret %s/%s present", ns, ref.Name)
	}
	return c
}

// checkTemplates dry-runs the apply of everything deploy would apply:
// present and up to date, or applicable (admission and validation pass).
func (r *checker) checkTemplates(ctx context.Context) report.Check {
	c := report.Check{Name: "templates"}
	res, err := apply.All(ctx, r.Clients.Dynamic, r.Objects, true)
	if err != nil {
		c.Status, c.Reason, c.Code = report.Fail, "not applicable: "+err.Error(), exitcode.Invalid
		return c
	}
	n := report.CountResults(res)
	if n[report.Unchanged] == len(res) {
		c.Status, c.Reason = report.Pass, fmt.Sprintf("all %d objects present and up to date", len(res))
		return c
	}
	c.Status = report.Pass
	c.Reason = fmt.Sprintf("applicable (server-side dry-run): %d to create, %d to update, %d up to date", n[report.WouldCreate], n[report.WouldConfigure], n[report.Unchanged])
	return c
}

// missingResources lists which of the resources a group version lacks.
func (r *checker) missingResources(gv string, names ...string) ([]string, error) {
	list, err := r.Clients.Kube.Discovery().ServerResourcesForGroupVersion(gv)
	if apierrors.IsNotFound(err) {
		return names, nil
	}
	if err != nil {
		return names, err
	}
	have := map[string]bool{}
	for _, res := range list.APIResources {
		have[res.Name] = true
	}
	var missing []string
	for _, n := range names {
		if !have[n] {
			missing = append(missing, n)
		}
	}
	return missing, nil
}

// readyEndpoints counts the ready endpoints of a Service's EndpointSlices.
func (r *checker) readyEndpoints(ctx context.Context, ns, svc string) (int, error) {
	if _, err := r.Clients.Kube.CoreV1().Services(ns).Get(ctx, svc, metav1.GetOptions{}); err != nil {
		return 0, err
	}
	slices, err := r.Clients.Kube.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + svc})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				n += len(e.Addresses)
			}
		}
	}
	return n, nil
}

func readyPods(pods []corev1.Pod) (ready, total int) {
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		total++
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready, total
}

func reasonOf(err error) string {
	if s, ok := err.(apierrors.APIStatus); ok {
		st := s.Status()
		return fmt.Sprintf("%d %s", st.Code, st.Reason)
	}
	return err.Error()
}

func suffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}

// checkHealthCustomizations is the sync-and-wait step's first check (see
// pkg/step/settings.go), made on the argocd-cm Argo CD reads: every health
// customization of the platform present with the generated script. Deploy
// applies them (rbac/argocd-cm.yaml) before it submits, so here their
// absence is a warning; a run submitted by hand without them is refused by
// its first node.
func (r *checker) checkHealthCustomizations(ctx context.Context) report.Check {
	c := report.Check{Name: "health-customizations"}
	p := r.Platform
	cs, err := healthlua.Customizations(p)
	if err != nil {
		c.Status, c.Reason, c.Code = report.Fail, err.Error(), exitcode.Invalid
		return c
	}
	ns := p.Spec.ArgoCD.Namespace
	var live map[string]string
	cm, err := r.Clients.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "argocd-cm", metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		c.Status, c.Reason = report.Warn, fmt.Sprintf("cannot read ConfigMap %s/argocd-cm: %s", ns, reasonOf(err))
		return c
	default:
		live = cm.Data
	}
	var missing, differ []string
	for _, h := range cs {
		got, ok := live[h.Key]
		switch {
		case !ok:
			missing = append(missing, h.Key)
		case step.HealthRequirement(h.Key, got) != step.HealthRequirement(h.Key, h.Lua):
			differ = append(differ, h.Key)
		}
	}
	if len(missing)+len(differ) == 0 {
		c.Status, c.Reason = report.Pass, fmt.Sprintf("argocd-cm has the %d health customizations the platform relies on, as generated", len(cs))
		return c
	}
	var what []string
	if len(missing) > 0 {
		what = append(what, "missing "+strings.Join(missing, ", "))
	}
	if len(differ) > 0 {
		what = append(what, "not the generated script: "+strings.Join(differ, ", "))
	}
	c.Status = report.Warn
	c.Reason = fmt.Sprintf("argocd-cm in %s: %s; ", ns, strings.Join(what, "; "))
	if r.Action == report.ActionDeploy && !r.DryRun {
		c.Reason += "deploy applies them (rbac/argocd-cm.yaml) before it submits"
	} else {
		c.Reason += "deploy applies them; a run submitted by hand before that is refused by its first node (apply rbac/ as the generated README says)"
	}
	return c
}
