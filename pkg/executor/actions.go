package executor

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/executor/internal/apply"
	"github.com/deployctl/deployctl/pkg/executor/internal/preflight"
	"github.com/deployctl/deployctl/pkg/executor/internal/workflow"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/livestate"
	"github.com/deployctl/deployctl/pkg/report"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// runPreflight runs Phase 0 and records it; a failed check stops the
// action before anything changes.
func (r *run) runPreflight(ctx context.Context) (int, string) {
	r.report.Phase(PhasePreflight)
	_, hasToken := r.cfg.secrets[SecretArgoCDToken]
	checks, inventory := preflight.Run(ctx, preflight.Input{
		Action: r.cfg.Action, Platform: r.cfg.DAG.Platform, Clients: r.cl, DryRun: r.cfg.DryRun,
		HasSecrets: len(r.cfg.secrets) > 0, HasToken: hasToken, SecretsDir: r.cfg.SecretsDir, TokenFile: SecretArgoCDToken,
		Objects: r.objects, Log: r.log.Phase(PhasePreflight),
	})
	r.report.EndPhase(PhasePreflight)
	r.report.Preflight, r.report.Inventory = checks, &inventory
	code := preflight.Code(checks)
	if code == exitcode.OK {
		return code, ""
	}
	var failed []string
	for _, c := range checks {
		if c.Status == report.Fail {
			failed = append(failed, c.Name)
			r.report.Fail(componentExecutor, PhasePreflight, c.Name+": "+c.Reason)
			r.metrics.Error(PhasePreflight)
			r.report.Recommend("%s", preflightFix[c.Name])
		}
	}
	return code, fmt.Sprintf("preflight failed (%s): nothing was changed", strings.Join(failed, ", "))
}

// preflightFix is what to do about a failed check.
var preflightFix = map[string]string{
	"api":                        "api: check the kubeconfig's server address and the network path to it, then run again",
	"credentials":                "credentials: renew the kubeconfig's credentials (token or client certificate)",
	"permissions":                "permissions: grant the executor's identity the verbs listed under failures (e.g. a ClusterRole bound to it)",
	"nodes":                      "nodes: bring at least one node to Ready (kubectl describe nodes)",
	"dns":                        "dns: make cluster DNS (CoreDNS, k8s-app=kube-dns) Running and Ready in kube-system",
	"argo-cd":                    "argo-cd: install Argo CD and wait until it is Ready (bootstrap, Phase 1)",
	"argo-workflows":             "argo-workflows: install Argo Workflows and wait until its controller is Ready (bootstrap, Phase 1)",
	"argocd-token":               "argocd-token: create the Argo CD API token Secret, or mount the token file into the secrets directory",
	"templates":                  "templates: fix what the API server refused in the dry-run apply (see failures)",
	preflight.CheckPlugin:        preflight.CheckPlugin + ": apply rbac/" + compile.PluginConfigMap + ".yaml (deploy does), one step image per workflow namespace in plugin mode",
	preflight.CheckPluginTokens:  preflight.CheckPluginTokens + ": apply rbac/ (the ServiceAccounts and their token Secrets; deploy does) and check Kubernetes' token controller fills them",
	preflight.CheckPluginEnabled: preflight.CheckPluginEnabled + ": set ARGO_EXECUTOR_PLUGINS=true on the workflow-controller Deployment (it restarts), or generate with spec.workflow.stepMode: pod",
}

func (r *run) preflightOnly(ctx context.Context) (int, string, error) {
	code, summary := r.runPreflight(ctx)
	if code != exitcode.OK {
		return code, summary, nil
	}
	n := map[string]int{}
	for _, c := range r.report.Preflight {
		n[c.Status]++
	}
	return code, fmt.Sprintf("the cluster is ready for %s: %d checks pass, %d warn", r.cfg.Platform(), n[report.Pass], n[report.Warn]), nil
}

// applyPhase ensures the orchestration primitives (RBAC, Argo CD config
// partials, credentials, templates); with DRY_RUN it only dry-runs them.
func (r *run) applyPhase(ctx context.Context) (int, string, error) {
	r.report.Phase(PhaseApply)
	defer r.report.EndPhase(PhaseApply)
	lg := r.log.Phase(PhaseApply)
	applied, err := apply.All(ctx, r.cl.Dynamic, r.objects, r.cfg.DryRun)
	r.report.Applied = applied
	for _, a := range applied {
		lg.Debug("applied", "object", report.ObjectName(a), "result", a.Result)
	}
	if err != nil {
		r.metrics.Error(PhaseApply)
		r.report.Fail(componentExecutor, PhaseApply, err.Error())
		code := exitcode.Failure
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
			code = exitcode.Invalid
		}
		r.report.Recommend("fix what the API server refused, then run %s again", r.cfg.Action)
		return code, "applying the templates failed: " + err.Error(), err
	}
	n := report.CountResults(applied)
	lg.Info("templates applied", "objects", len(applied), "created", n[report.Created]+n[report.WouldCreate],
		"configured", n[report.Configured]+n[report.WouldConfigure], "unchanged", n[report.Unchanged], "dry_run", r.cfg.DryRun)
	return exitcode.OK, "", nil
}

// prepare is what deploy and teardown start with: preflight, apply the
// templates, then decide on the run from the platform's workflows. A
// non-zero code ends the action (a conflict included).
func (r *run) prepare(ctx context.Context, action dag.Action, upToDate, absent func() (bool, string)) (workflow.Decision, int, string, error) {
	if code, summary := r.runPreflight(ctx); code != exitcode.OK {
		return workflow.Decision{}, code, summary, nil
	}
	r.report.Phase(PhaseSubmit)
	runs, err := r.platformRuns(ctx)
	if err != nil {
		r.metrics.Error(PhaseSubmit)
		return workflow.Decision{}, exitcode.Failure, err.Error(), err
	}
	dec := workflow.Decide(runs, action, r.compiled.SpecHash, r.cfg.ForceRun, upToDate)
	if dec.Kind == workflow.DecideSubmit && absent != nil {
		if ok, why := absent(); ok {
			dec = workflow.Decision{Kind: workflow.DecideNothing, Reason: why}
		}
	}
	wr := &report.WorkflowRun{Namespace: r.wfNamespace(), Decision: dec.Kind, Reason: dec.Reason}
	if dec.Run != nil && dec.Kind != workflow.DecideSubmit {
		wr.Name = dec.Run.Name // the run acted on; a new one is named when created
	}
	r.report.Workflow = wr
	r.log.Phase(PhaseSubmit).Info("decided", "decision", dec.Kind, "workflow", wr.Name, "reason", dec.Reason)
	switch dec.Kind {
	case workflow.DecideConflict:
		r.metrics.Error(PhaseSubmit)
		r.report.Fail(componentExecutor, PhaseSubmit, dec.Reason)
		r.report.Recommend("wait for %s to finish (or stop it), then run %s again", dec.Run.Name, action)
		return dec, exitcode.Failure, "another run of the platform is in progress: " + dec.Reason, nil
	case workflow.DecideNothing:
		return dec, exitcode.OK, "", nil
	}
	if code, summary, err := r.applyPhase(ctx); code != exitcode.OK {
		return workflow.Decision{}, code, summary, err
	}
	if r.cfg.DAG.Platform.Spec.Workflow.StepMode.Plugin() && !r.cfg.DryRun {
		r.awaitTokens(ctx)
	}
	return dec, exitcode.OK, "", nil
}

func (r *run) deploy(ctx context.Context) (int, string, error) {
	refs := r.componentRefs(dag.Deploy)
	apps := appsOf(refs)
	dec, code, summary, err := r.prepare(ctx, dag.Deploy, func() (bool, string) {
		states, _, err := r.readApps(ctx, apps)
		if err != nil {
			return false, err.Error()
		}
		return upToDate(states)
	}, nil)
	if code != exitcode.OK {
		return code, summary, err
	}
	wr := r.report.Workflow
	lg := r.log.Phase(PhaseSubmit)

	var w *wfv1.Workflow
	kept := map[string]bool{}
	switch dec.Kind {
	case workflow.DecideSkip:
		r.report.EndPhase(PhaseSubmit)
		return r.finalHealth(ctx, refs, "up to date: "+dec.Reason+"; nothing was run", false)
	case workflow.DecideResume:
		plan, err := workflow.PlanRetry(ctx, dec.Run)
		if err != nil {
			r.metrics.Error(PhaseSubmit)
			return exitcode.Failure, err.Error(), err
		}
		wr.ResetNodes, wr.KeptNodes = visible(plan.Reset, refs), keptTasks(dec.Run, plan.Reset, refs)
		for _, t := range wr.KeptNodes {
			kept[t] = true
		}
		if r.cfg.DryRun {
			return exitcode.OK, fmt.Sprintf("dry run: would resume %s, running again %s; %d succeeded apps kept",
				dec.Run.Name, strings.Join(wr.ResetNodes, ", "), len(wr.KeptNodes)), nil
		}
		if w, _, err = workflow.Resume(ctx, r.cl, dec.Run); err != nil {
			r.metrics.Error(PhaseSubmit)
			return exitcode.Failure, err.Error(), err
		}
		w = workflow.AwaitPickup(ctx, r.cl, w, workflow.Pickup{Poll: r.poll, Log: r.log.Phase(PhaseSubmit)})
		lg.Info("resumed", "workflow", w.Name, "reset", strings.Join(wr.ResetNodes, ","), "kept", len(wr.KeptNodes))
	case workflow.DecideFollow:
		w = dec.Run
	case workflow.DecideSubmit:
		if r.cfg.DryRun {
			return exitcode.OK, fmt.Sprintf("dry run: would submit a new run of WorkflowTemplate %s/%s (%s): %d apps in dependency order: %s",
				r.wfNamespace(), r.compiled.WorkflowTemplates[dag.Deploy].Name, r.cfg.Submit, len(refs), strings.Join(tasksOf(refs), " → ")), nil
		}
		nw, err := r.newRun(ctx, dag.Deploy, nil)
		if err == nil {
			w, err = workflow.Submit(ctx, r.cl, nw)
		}
		if err != nil {
			r.metrics.Error(PhaseSubmit)
			return exitcode.Failure, err.Error(), err
		}
		wr.Name = w.Name
		lg.Info("submitted", "workflow", w.Name, "submit", r.cfg.Submit)
	}
	if r.cfg.DryRun {
		return exitcode.OK, fmt.Sprintf("dry run: would follow %s (%s)", dec.Run.Name, workflow.PhaseOf(dec.Run)), nil
	}
	r.report.EndPhase(PhaseSubmit)
	return r.followAndReport(ctx, w, refs, kept)
}

// followAndReport follows a deploy run to its end, then validates.
func (r *run) followAndReport(ctx context.Context, w *wfv1.Workflow, refs []compRef, kept map[string]bool) (int, string, error) {
	w, ended, code, summary, err := r.followRun(ctx, w, refs, dag.Deploy, kept)
	if ended {
		return code, summary, err
	}
	if w.Status.Phase != wfv1.WorkflowSucceeded {
		states, agg, herr := r.readApps(ctx, appsOf(refs))
		if herr == nil {
			r.withHealth(states)
			r.report.Health = agg
		}
		return exitcode.Failure, r.failureSummary(w, refs), nil
	}
	return r.finalHealth(ctx, refs, fmt.Sprintf("%s Succeeded", w.Name), true)
}

// followRun follows a deploy or teardown run to its end and records it in
// the report; ended says the action ends here (the follow failed, the
// controller refused an inline run, plugin mode's plugin is missing) with
// the code, summary and error given.
func (r *run) followRun(ctx context.Context, w *wfv1.Workflow, refs []compRef, action dag.Action, kept map[string]bool) (*wfv1.Workflow, bool, int, string, error) {
	r.report.Phase(PhaseFollow)
	w, err := r.follow(ctx, w, tasksOf(refs))
	r.report.EndPhase(PhaseFollow)
	r.recordRun(w)
	r.fromWorkflow(w, refs, action, kept)
	if err == nil && refusedInline(w) {
		code, summary, err := r.inlineRefused(ctx, w)
		return w, true, code, summary, err
	}
	if code, summary, ok := r.pluginMissing(ctx, w, err); ok {
		return w, true, code, summary, err
	}
	if err != nil {
		return w, true, exitcode.Failure, err.Error(), err
	}
	return w, false, exitcode.OK, "", nil
}

// failureSummary names the failed apps, what did not run because of them,
// and recommends the fix-and-resume path.
func (r *run) failureSummary(w *wfv1.Workflow, refs []compRef) string {
	var failed, notRun, done []string
	for _, c := range r.report.Components {
		switch c.Status {
		case string(wfv1.NodeFailed), string(wfv1.NodeError):
			failed = append(failed, c.Name)
		case report.CompNotRun:
			notRun = append(notRun, c.Name)
		case string(wfv1.NodeSucceeded), report.CompKept:
			done = append(done, c.Name)
		}
	}
	if len(failed) == 0 {
		r.report.Recommend("the workflow %s ended %s (%s): inspect it with `argo get %s -n %s`, then run deploy again", w.Name, w.Status.Phase, w.Status.Message, w.Name, w.Namespace)
		return fmt.Sprintf("%s ended %s: %s", w.Name, w.Status.Phase, w.Status.Message)
	}
	for _, f := range r.report.Failures {
		if f.Phase == PhaseFollow {
			r.report.Recommend("fix %s (%s), then run deploy again: it resumes %s from %s; succeeded apps (%d) are not synced again",
				f.Component, f.Message, w.Name, f.Component, len(done))
		}
	}
	s := fmt.Sprintf("%s failed at %s", w.Name, strings.Join(failed, ", "))
	if len(notRun) > 0 {
		s += fmt.Sprintf("; not run because of it: %s", strings.Join(notRun, ", "))
	}
	return s + fmt.Sprintf("; %d of %d apps succeeded", len(done), len(refs))
}

// finalHealth reads Argo CD's view of the components, read-only. After a
// run (ran) it adds health to the run's components, and a platform not
// Healthy after a successful run is a failure to report; without a run
// (up to date, validate) the components are the apps as read.
func (r *run) finalHealth(ctx context.Context, refs []compRef, what string, ran bool) (int, string, error) {
	r.report.Phase(PhaseValidate)
	defer r.report.EndPhase(PhaseValidate)
	states, agg, err := r.readApps(ctx, appsOf(refs))
	if err != nil {
		r.metrics.Error(PhaseValidate)
		return exitcode.Failure, err.Error(), err
	}
	if ran {
		r.withHealth(states)
	} else {
		r.componentsFromApps(refs, states)
	}
	r.report.Health = agg
	code := healthCode(agg)
	if code != exitcode.OK && ran {
		for _, c := range r.report.Components {
			if c.Verdict != AggHealthy {
				r.report.Fail(c.Name, PhaseValidate, fmt.Sprintf("%s after the run (sync %s)", orDash(c.Health), orDash(c.Sync)))
				r.metrics.Error(PhaseValidate)
			}
		}
		r.report.Recommend("the run succeeded but the platform is %s now: inspect the apps listed under failures in Argo CD, then run validate", agg)
	}
	return code, fmt.Sprintf("%s; %d apps, aggregate health %s", what, len(refs), agg), nil
}

// recordRun copies the run's outcome into the report.
func (r *run) recordRun(w *wfv1.Workflow) {
	wr := r.report.Workflow
	wr.Name, wr.Phase, wr.Message = w.Name, string(w.Status.Phase), w.Status.Message
	if !w.Status.StartedAt.IsZero() {
		t := w.Status.StartedAt.UTC()
		wr.StartedAt = &t
	}
	if !w.Status.FinishedAt.IsZero() {
		t := w.Status.FinishedAt.UTC()
		wr.FinishedAt = &t
	}
}

// visible keeps the tasks that are components (not stack joins).
func visible(tasks []string, refs []compRef) []string {
	show := map[string]bool{}
	for _, c := range refs {
		show[c.task] = true
	}
	var out []string
	for _, t := range tasks {
		if show[t] {
			out = append(out, t)
		}
	}
	return out
}

// keptTasks are the components that succeeded in w and are not reset.
func keptTasks(w *wfv1.Workflow, reset []string, refs []compRef) []string {
	isReset := map[string]bool{}
	for _, t := range reset {
		isReset[t] = true
	}
	nodes := livestate.TaskNodes(w)
	var out []string
	for _, c := range refs {
		if n, ok := nodes[c.task]; ok && n.Phase == wfv1.NodeSucceeded && !isReset[c.task] {
			out = append(out, c.task)
		}
	}
	sort.Strings(out)
	return out
}

// validate reads every app's health from Argo CD's Applications: strictly
// read-only, no workflow, no pod. (The validate WorkflowTemplate runs the
// same per-app mapping inside the cluster, for schedules and audits.)
func (r *run) validate(ctx context.Context) (int, string, error) {
	if code, summary := r.runPreflight(ctx); code != exitcode.OK {
		return code, summary, nil
	}
	refs := r.componentRefs(dag.Deploy)
	if r.compiled.Root != nil {
		refs = refs[:len(refs)-1] // the root Application is the GitOps handoff, not a platform app
	}
	code, summary, err := r.finalHealth(ctx, refs, "read from Argo CD", false)
	if err != nil {
		return code, summary, err
	}
	for _, c := range r.report.Components {
		if c.Verdict != AggHealthy {
			r.report.Fail(c.Name, PhaseValidate, c.Verdict+": "+c.Message)
			r.metrics.Error(PhaseValidate)
		}
	}
	if code != exitcode.OK {
		r.report.Recommend("inspect the apps listed under failures in Argo CD (argocd app get NAME); once fixed in Git, run deploy")
	}
	return code, summary, nil
}

func (r *run) teardown(ctx context.Context) (int, string, error) {
	refs := r.componentRefs(dag.Teardown)
	var states map[string]*appState
	dec, code, summary, err := r.prepare(ctx, dag.Teardown, nil, func() (bool, string) {
		names, err := r.teardownNames(ctx, refs)
		if err == nil {
			states, _, err = r.readApps(ctx, names)
		}
		if err != nil {
			return false, ""
		}
		for _, s := range states {
			if s.Exists {
				return false, ""
			}
		}
		return true, fmt.Sprintf("none of the %d Applications of the scope exists (and none carries the platform's label)", len(states))
	})
	if code != exitcode.OK {
		return code, summary, err
	}
	wr := r.report.Workflow
	var w *wfv1.Workflow
	switch dec.Kind {
	case workflow.DecideNothing:
		for _, c := range refs {
			r.report.Components = append(r.report.Components, report.Component{Name: c.app, Stack: c.stack, Status: report.CompNothingToDo, Message: "the Application does not exist"})
		}
		r.withHealth(states)
		return exitcode.OK, "nothing to tear down: " + dec.Reason + "; no workflow was run", nil
	case workflow.DecideFollow:
		w, wr.Name = dec.Run, dec.Run.Name
	default:
		if r.cfg.DryRun {
			states, _, err := r.readApps(ctx, appsOf(refs))
			if err != nil {
				return exitcode.Failure, err.Error(), err
			}
			var present []string
			for _, c := range refs {
				if states[c.app].Exists {
					present = append(present, c.app)
				}
			}
			r.componentsFromApps(refs, states)
			return exitcode.OK, fmt.Sprintf("dry run: would submit a teardown (pv-policy %s, crd-policy %s) deleting, in this order, the %d of %d apps that exist: %s",
				r.cfg.PVPolicy, r.cfg.CRDPolicy, len(present), len(refs), strings.Join(present, " → ")), nil
		}
		nw, err := r.newRun(ctx, dag.Teardown, map[string]string{stepcontract.WorkflowConfirm: r.cfg.Confirm, stepcontract.WorkflowPVPolicy: r.cfg.PVPolicy, stepcontract.WorkflowCRDPolicy: r.cfg.CRDPolicy})
		if err == nil {
			w, err = workflow.Submit(ctx, r.cl, nw)
		}
		if err != nil {
			r.metrics.Error(PhaseSubmit)
			return exitcode.Failure, err.Error(), err
		}
		wr.Name = w.Name
		r.log.Phase(PhaseSubmit).Info("submitted", "workflow", w.Name, "pv_policy", r.cfg.PVPolicy, "crd_policy", r.cfg.CRDPolicy, "submit", r.cfg.Submit)
	}
	r.report.EndPhase(PhaseSubmit)

	w, ended, code, summary, err := r.followRun(ctx, w, refs, dag.Teardown, nil)
	if ended {
		return code, summary, err
	}
	return r.verifyTeardown(ctx, w, refs)
}

// verifyTeardown checks Argo CD's side after the run: no Application of
// the scope (and, for the whole platform, none labelled with it) is left.
// Exit 0 clean, 2 when only orphans (resources or Applications) are left,
// 1 on any other failure.
func (r *run) verifyTeardown(ctx context.Context, w *wfv1.Workflow, refs []compRef) (int, string, error) {
	r.report.Phase(PhaseVerify)
	defer r.report.EndPhase(PhaseVerify)
	names, err := r.teardownNames(ctx, refs)
	if err != nil {
		r.metrics.Error(PhaseVerify)
		return exitcode.Failure, err.Error(), err
	}
	states, _, err := r.readApps(ctx, names)
	if err != nil {
		r.metrics.Error(PhaseVerify)
		return exitcode.Failure, err.Error(), err
	}
	r.withHealth(states)
	var left []string
	for _, n := range names {
		if states[n].Exists {
			left = append(left, n)
		}
	}
	sort.Strings(left)
	n := map[string]int{}
	for _, c := range r.report.Components {
		n[c.Status]++
	}
	switch teardownCode(w.Status.Phase, r.report.Components, len(left)) {
	case exitcode.Failure:
		r.report.Recommend("fix what blocked the teardown (see failures), then run teardown again: apps already deleted are found gone")
		return exitcode.Failure, fmt.Sprintf("%s ended %s; %d apps deleted, %s still present: %s",
			w.Name, w.Status.Phase, n[report.CompDeleted], plural(len(left), "Application"), strings.Join(left, ", ")), nil
	case exitcode.Partial:
		for _, name := range left {
			r.report.Fail(name, PhaseVerify, "the Application still exists after the teardown")
			r.metrics.Error(PhaseVerify)
		}
		r.report.Recommend("delete the orphaned resources listed under failures (or move them out of the platform), then run teardown again")
		return exitcode.Partial, fmt.Sprintf("%s: teardown left orphans (%d components with orphaned resources, %d Applications left)", w.Name, n[report.CompOrphans], len(left)), nil
	}
	return exitcode.OK, fmt.Sprintf("%s Succeeded: %d apps deleted, %d already absent; no Application of the scope is left", w.Name, n[report.CompDeleted], n[report.CompNothingToDo]), nil
}

// teardownCode classifies a finished teardown: 1 when a node failed for
// another reason than orphaned resources (or the run failed with none), 2
// when only orphans or Applications are left, 0 when clean.
func teardownCode(phase wfv1.WorkflowPhase, comps []report.Component, left int) int {
	orphans, failures := 0, 0
	for _, c := range comps {
		switch c.Status {
		case report.CompOrphans:
			orphans++
		case string(wfv1.NodeFailed), string(wfv1.NodeError):
			failures++
		}
	}
	switch {
	case failures > 0 || (phase != wfv1.WorkflowSucceeded && orphans == 0):
		return exitcode.Failure
	case orphans > 0 || left > 0:
		return exitcode.Partial
	}
	return exitcode.OK
}

// teardownNames are the Applications a teardown must leave absent: the
// scope's, and for the whole platform also any carrying its label (an app
// removed from the spec since it was deployed).
func (r *run) teardownNames(ctx context.Context, refs []compRef) ([]string, error) {
	names := appsOf(refs)
	if r.cfg.Scope != "platform" {
		return names, nil
	}
	list, err := r.readPlatformApps(ctx)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	for _, n := range list {
		if !have[n] {
			names = append(names, n)
		}
	}
	return names, nil
}

// readPlatformApps lists the Applications labelled with the platform, in
// Argo CD's namespace and every app's applicationNamespace.
func (r *run) readPlatformApps(ctx context.Context) ([]string, error) {
	nss := invert(r.appNamespaces(r.cfg.DAG.Apps()))
	nss[r.cfg.DAG.Platform.Spec.ArgoCD.Namespace] = true
	var out []string
	for _, ns := range slices.Sorted(maps.Keys(nss)) {
		list, err := r.cl.Dynamic.Resource(livestate.GVRApplication).Namespace(ns).List(ctx, listByPlatform(r.cfg.Platform()))
		if err != nil {
			return nil, err
		}
		for _, u := range list.Items {
			out = append(out, u.GetName())
		}
	}
	return out, nil
}

func listByPlatform(p string) metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: compile.LabelPlatform + "=" + p}
}
