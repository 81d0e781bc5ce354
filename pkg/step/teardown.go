package step

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/deployctl/deployctl/pkg/step/argocd"
)

// PersistentVolumeClaim policies of teardown.
const (
	pvRetain = "retain"
	pvDelete = "delete"
)

// teardownResult is the result file of teardown.
type teardownResult struct {
	header
	App      string `json:"app"`
	Platform string `json:"platform"`
	PVPolicy string `json:"pvPolicy"`
	// NothingToDo: the application was already gone.
	NothingToDo bool `json:"nothingToDo"`
	// Managed: what the application managed when teardown began.
	Managed []string `json:"managed,omitempty"`
	// Orphans: resources left in the cluster that belonged to the app.
	Orphans []resourceIssue `json:"orphans,omitempty"`
	// RetainedPVCs: claims of StatefulSet volumeClaimTemplates kept under
	// pv-policy retain (Argo CD never deletes them: they are not manifests).
	RetainedPVCs []string `json:"retainedPVCs,omitempty"`
	// DeletedPVCs: such claims deleted under pv-policy delete.
	DeletedPVCs []string `json:"deletedPVCs,omitempty"`
}

func (r *teardownResult) summary() string {
	switch {
	case r.ExitCode != ExitOK:
		return fmt.Sprintf("teardown %s: %s (exit %d): %s", r.App, strings.ToUpper(r.Outcome), r.ExitCode, r.Message)
	case r.NothingToDo:
		return fmt.Sprintf("teardown %s: nothing to do, the application does not exist", r.App)
	}
	return fmt.Sprintf("teardown %s: deleted with its %d managed resources, no orphans (%d PVCs retained, %d deleted)",
		r.App, len(r.Managed), len(r.RetainedPVCs), len(r.DeletedPVCs))
}

// teardown deletes the application and everything it manages. The step can
// only see the cluster through Argo CD, and once the Application is gone Argo
// CD says nothing about its former resources. So what will be left behind is
// decided before deleting, from what Argo CD itself will skip:
//   - resources whose live object carries argocd.argoproj.io/sync-options
//     Delete=false or helm.sh/resource-policy: keep, and CRDs (Argo CD never
//     cascades to CRDs) — reported as orphans, exit 2;
//   - PVCs created from StatefulSet volumeClaimTemplates (in the tree, not
//     managed): retained and listed under retain, deleted through Argo CD's
//     resource API before the app under delete (afterwards Argo CD can no
//     longer reach them).
//
// Everything else is deleted by Argo CD's foreground cascade, which removes
// the Application only after its resources are gone: waiting for the
// Application to disappear is waiting for them.
func (r *runner) teardown(ctx context.Context, o teardownOpts, res *teardownResult) error {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	name := o.app
	get := func(ctx context.Context) (app *argocd.Application, err error) {
		err = r.call(ctx, "get application "+name, func(ctx context.Context) (err error) {
			app, err = r.c.Get(ctx, name)
			return err
		})
		return app, err
	}
	app, err := get(ctx)
	if argocd.IsNotFound(err) {
		res.NothingToDo = true
		r.log("application %s does not exist: nothing to do", name)
		return nil
	}
	if err != nil {
		return err
	}

	if !o.cascade {
		return r.orphanDelete(ctx, app, o, res)
	}

	// What the app manages, and what Argo CD will leave behind.
	var managed []argocd.ResourceDiff
	err = r.call(ctx, "managed resources of "+name, func(ctx context.Context) (err error) {
		managed, err = r.c.ManagedResources(ctx, name)
		return err
	})
	if err != nil && !argocd.IsNotFound(err) {
		return err
	}
	for _, m := range managed {
		if m.Hook {
			continue
		}
		res.Managed = append(res.Managed, m.Ref().String())
		if reason := keptByArgoCD(m); reason != "" {
			res.Orphans = append(res.Orphans, issue(m.Ref(), "kept", reason))
		}
	}
	var tree *argocd.ApplicationTree
	err = r.call(ctx, "resource tree of "+name, func(ctx context.Context) (err error) {
		tree, err = r.c.ResourceTree(ctx, name)
		return err
	})
	if err != nil && !argocd.IsNotFound(err) {
		return err
	}
	if err := r.handleTemplatePVCs(ctx, name, o.pvPolicy, templatePVCs(tree, managed), res); err != nil {
		return err
	}

	if app.Metadata.DeletionTimestamp == nil {
		err = r.call(ctx, "delete application "+name, func(ctx context.Context) error { return r.c.Delete(ctx, name, true) })
		if err != nil && !argocd.IsNotFound(err) {
			return err
		}
		r.log("deletion of %s requested (cascade, foreground); waiting up to %s", name, o.timeout)
	} else {
		r.log("%s is already being deleted; waiting up to %s", name, o.timeout)
	}

	src := r.watchApp(ctx, name)
	defer src.close()
	err = src.wait(ctx, func(v view) (bool, error) { return v.gone(), nil })
	if err == errWaitDeadline {
		return src.deadlineError("application %s still exists after %s%s", name, o.timeout, remaining(src.current().app))
	}
	if err != nil {
		return err
	}
	r.log("application %s is gone", name)
	if len(res.Orphans) > 0 {
		return fail(ExitPartial, "application %s deleted, but %d resource(s) were left in the cluster: %s",
			name, len(res.Orphans), listIssues(res.Orphans))
	}
	return nil
}

// handleTemplatePVCs applies the PVC policy to claims Argo CD will not touch.
func (r *runner) handleTemplatePVCs(ctx context.Context, app, policy string, pvcs []argocd.ResourceRef, res *teardownResult) error {
	for _, pvc := range pvcs {
		if policy == pvRetain {
			res.RetainedPVCs = append(res.RetainedPVCs, pvc.String())
			continue
		}
		err := r.call(ctx, "delete "+pvc.String(), func(ctx context.Context) error { return r.c.DeleteResource(ctx, app, pvc) })
		switch {
		case err == nil || argocd.IsNotFound(err):
			res.DeletedPVCs = append(res.DeletedPVCs, pvc.String())
		case exitCode(err) == ExitTransient:
			return err
		default:
			res.Orphans = append(res.Orphans, issue(pvc, "not deleted", err.Error()))
		}
	}
	if len(res.RetainedPVCs) > 0 {
		r.log("retaining %d PVC(s) of StatefulSets (pv-policy retain): %s", len(res.RetainedPVCs), strings.Join(res.RetainedPVCs, ", "))
	}
	return nil
}

// templatePVCs are the PVCs in the tree that the app does not manage itself:
// the claims StatefulSets create from volumeClaimTemplates.
func templatePVCs(tree *argocd.ApplicationTree, managed []argocd.ResourceDiff) []argocd.ResourceRef {
	if tree == nil {
		return nil
	}
	var out []argocd.ResourceRef
nodes:
	for _, n := range tree.Nodes {
		if n.Group != "" || n.Kind != "PersistentVolumeClaim" {
			continue
		}
		for _, m := range managed {
			if m.Ref().Same(n.ResourceRef) {
				continue nodes
			}
		}
		ref := n.ResourceRef
		if ref.Version == "" {
			ref.Version = "v1"
		}
		out = append(out, ref)
	}
	return out
}

// keptByArgoCD says why Argo CD's cascade will not delete a managed resource
// (controller.shouldBeDeleted), or "" if it will.
func keptByArgoCD(m argocd.ResourceDiff) string {
	if m.Group == "apiextensions.k8s.io" && m.Kind == "CustomResourceDefinition" {
		return "Argo CD does not delete CustomResourceDefinitions on cascade"
	}
	if m.LiveState == "" || m.LiveState == "null" {
		return ""
	}
	var live struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if json.Unmarshal([]byte(m.LiveState), &live) != nil {
		return ""
	}
	a := live.Metadata.Annotations
	if hasOption(a["argocd.argoproj.io/sync-options"], "Delete=false") {
		return "annotated argocd.argoproj.io/sync-options: Delete=false"
	}
	if hasOption(a["helm.sh/resource-policy"], "keep") {
		return "annotated helm.sh/resource-policy: keep"
	}
	return ""
}

func hasOption(list, opt string) bool {
	for _, o := range strings.Split(list, ",") {
		if strings.TrimSpace(o) == opt {
			return true
		}
	}
	return false
}

// remaining lists what still holds the Application back.
func remaining(app *argocd.Application) string {
	if app == nil {
		return ""
	}
	var s []string
	for _, rs := range app.Status.Resources {
		s = append(s, rs.Ref().String())
	}
	out := ""
	if len(app.Metadata.Finalizers) > 0 {
		out += "; finalizers: " + strings.Join(app.Metadata.Finalizers, ", ")
	}
	if len(s) > 0 {
		out += "; resources still present: " + strings.Join(s, "; ")
	}
	return out
}

// orphanDelete removes the Application alone, leaving its resources: for the
// root Application, whose children are Applications with teardown nodes of
// their own that delete them in dependency order. Nothing is an orphan here:
// what stays is meant to stay.
func (r *runner) orphanDelete(ctx context.Context, app *argocd.Application, o teardownOpts, res *teardownResult) error {
	name := o.app
	if app.Metadata.DeletionTimestamp == nil {
		err := r.call(ctx, "delete application "+name, func(ctx context.Context) error { return r.c.Delete(ctx, name, false) })
		if err != nil && !argocd.IsNotFound(err) {
			return err
		}
		r.log("deletion of %s requested without cascade: its resources stay for their own teardown nodes", name)
	}
	src := r.watchApp(ctx, name)
	defer src.close()
	err := src.wait(ctx, func(v view) (bool, error) { return v.gone(), nil })
	if err == errWaitDeadline {
		return src.deadlineError("application %s still exists after %s", name, o.timeout)
	}
	return err
}
