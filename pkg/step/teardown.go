package step

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/argocd"
	"github.com/deployctl/deployctl/pkg/step/cmdline"
	"github.com/deployctl/deployctl/pkg/stepcontract"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

// teardown deletes the application and everything it manages. The step can
// only see the cluster through Argo CD, and once the Application is gone Argo
// CD says nothing about its former resources. So what will be left behind is
// decided before deleting, from what Argo CD itself will skip:
//   - resources whose live object carries argocd.argoproj.io/sync-options
//     Delete=false or helm.sh/resource-policy: keep — reported as orphans,
//     exit 2: someone asked for them to stay;
//   - CRDs the app manages (Argo CD never cascades to CRDs), under
//     crd-policy, and PVCs created from StatefulSet volumeClaimTemplates (in
//     the tree, not managed), under pv-policy: retained and listed under
//     retain, deleted through Argo CD's resource API before the app under
//     delete (afterwards Argo CD can no longer reach them).
//
// Everything else is deleted by Argo CD's foreground cascade, which removes
// the Application only after its resources are gone: waiting for the
// Application to disappear is waiting for them.
func (r *runner) teardown(ctx context.Context, o stepcontract.Teardown, res *stepresult.TeardownResult) error {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	name := o.App
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

	if !o.Cascade {
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
	var crds []argocd.ResourceRef
	for _, m := range managed {
		if m.Hook {
			continue
		}
		res.Managed = append(res.Managed, m.Ref().String())
		switch reason := keptByArgoCD(m); {
		case reason != "":
			res.Orphans = append(res.Orphans, issue(m.Ref(), "kept", reason))
		case isCRD(m) && hasLive(m):
			ref := m.Ref()
			// The only version served since Kubernetes 1.22; Argo CD deletes
			// at its tree node's version anyway.
			ref.Version = "v1"
			crds = append(crds, ref)
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
	for _, l := range []leftByCascade{
		{flag: "pv-policy", policy: o.PVPolicy, what: "PVC(s) of StatefulSets", refs: templatePVCs(tree, managed),
			retained: &res.RetainedPVCs, deleted: &res.DeletedPVCs},
		{flag: "crd-policy", policy: o.CRDPolicy, what: "CustomResourceDefinition(s)", refs: crds,
			retained: &res.RetainedCRDs, deleted: &res.DeletedCRDs},
	} {
		if err := r.applyPolicy(ctx, name, l, res); err != nil {
			return err
		}
	}

	if app.Metadata.DeletionTimestamp == nil {
		err = r.call(ctx, "delete application "+name, func(ctx context.Context) error { return r.c.Delete(ctx, name, true) })
		if err != nil && !argocd.IsNotFound(err) {
			return err
		}
		r.log("deletion of %s requested (cascade, foreground); waiting up to %s", name, o.Timeout)
	} else {
		r.log("%s is already being deleted; waiting up to %s", name, o.Timeout)
	}

	src := r.watchApp(ctx, name)
	defer src.close()
	err = src.wait(ctx, func(v view) (bool, error) { return v.gone(), nil })
	if err == errWaitDeadline {
		return src.deadlineError("application %s still exists after %s%s", name, o.Timeout, remaining(src.current().app))
	}
	if err != nil {
		return err
	}
	r.log("application %s is gone", name)
	if len(res.Orphans) > 0 {
		return fail(exitcode.Partial, "application %s deleted, but %d resource(s) were left in the cluster: %s",
			name, len(res.Orphans), listIssues(res.Orphans))
	}
	return nil
}

// leftByCascade is what Argo CD's cascade will not delete and a policy flag
// decides on.
type leftByCascade struct {
	flag, policy, what string
	refs               []argocd.ResourceRef
	retained, deleted  *[]string
}

// applyPolicy retains the resources, or deletes them through Argo CD's
// resource API; one it fails to delete is an orphan.
func (r *runner) applyPolicy(ctx context.Context, app string, l leftByCascade, res *stepresult.TeardownResult) error {
	for _, ref := range l.refs {
		if l.policy == cmdline.PolicyRetain {
			*l.retained = append(*l.retained, ref.String())
			continue
		}
		err := r.call(ctx, "delete "+ref.String(), func(ctx context.Context) error { return r.c.DeleteResource(ctx, app, ref) })
		switch {
		case err == nil || argocd.IsNotFound(err):
			*l.deleted = append(*l.deleted, ref.String())
		case exitcode.Of(err) == exitcode.Transient:
			return err
		default:
			res.Orphans = append(res.Orphans, issue(ref, "not deleted", err.Error()))
		}
	}
	if len(*l.retained) > 0 {
		r.log("retaining %d %s (%s retain): %s", len(*l.retained), l.what, l.flag, strings.Join(*l.retained, ", "))
	}
	if len(*l.deleted) > 0 {
		r.log("deleted %d %s (%s delete): %s", len(*l.deleted), l.what, l.flag, strings.Join(*l.deleted, ", "))
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
// on request of its annotations (controller.shouldBeDeleted), or "" if it
// will. CRDs, which it never deletes, are left to crd-policy.
func keptByArgoCD(m argocd.ResourceDiff) string {
	if !hasLive(m) {
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

func isCRD(m argocd.ResourceDiff) bool {
	return m.Group == "apiextensions.k8s.io" && m.Kind == "CustomResourceDefinition"
}

// hasLive: the resource exists in the cluster.
func hasLive(m argocd.ResourceDiff) bool {
	return m.LiveState != "" && m.LiveState != "null"
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
func (r *runner) orphanDelete(ctx context.Context, app *argocd.Application, o stepcontract.Teardown, res *stepresult.TeardownResult) error {
	name := o.App
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
		return src.deadlineError("application %s still exists after %s", name, o.Timeout)
	}
	return err
}
