package executor

import (
	"context"
	"fmt"

	"github.com/deployctl/deployctl/pkg/report"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// FieldManager owns the fields deployctl applies (but see
// PlatformFieldManager).
const FieldManager = "deployctl"

// applyAll server-side applies objs in order, forcing conflicts (deployctl
// is the authority for what it generates). It is idempotent: the API
// server does not write an apply that changes nothing, so the object's
// resourceVersion stays, and that is how "unchanged" is told apart. With
// dryRun the server runs the whole apply (admission, validation, merge)
// without persisting; the outcome then compares the would-be object with
// the live one.
func applyAll(ctx context.Context, dyn dynamic.Interface, objs []object, dryRun bool) ([]report.Applied, error) {
	var out []report.Applied
	for _, o := range objs {
		res, err := applyOne(ctx, dyn, o, dryRun)
		if err != nil {
			return out, fmt.Errorf("applying %s: %w", o, err)
		}
		out = append(out, report.Applied{Kind: o.u.GetKind(), Namespace: o.u.GetNamespace(), Name: o.u.GetName(), Result: res})
	}
	return out, nil
}

func applyOne(ctx context.Context, dyn dynamic.Interface, o object, dryRun bool) (string, error) {
	var rc dynamic.ResourceInterface = dyn.Resource(o.gvr)
	if ns := o.u.GetNamespace(); ns != "" {
		rc = dyn.Resource(o.gvr).Namespace(ns)
	}
	live, err := rc.Get(ctx, o.u.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return "", err
	}
	opts := metav1.ApplyOptions{FieldManager: o.manager, Force: true}
	if opts.FieldManager == "" {
		opts.FieldManager = FieldManager
	}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	after, err := rc.Apply(ctx, o.u.GetName(), o.u, opts)
	if err != nil {
		return "", err
	}
	switch {
	case live == nil && dryRun:
		return report.WouldCreate, nil
	case live == nil:
		return report.Created, nil
	case dryRun && sameObject(live, after):
		return report.Unchanged, nil
	case dryRun:
		return report.WouldConfigure, nil
	case after.GetResourceVersion() == live.GetResourceVersion():
		return report.Unchanged, nil
	}
	return report.Configured, nil
}

// sameObject compares two versions of an object, ignoring what a dry-run
// apply may touch without changing anything (field manager bookkeeping).
func sameObject(a, b *unstructured.Unstructured) bool {
	strip := func(u *unstructured.Unstructured) map[string]any {
		c := u.DeepCopy()
		unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
		unstructured.RemoveNestedField(c.Object, "metadata", "resourceVersion")
		return c.Object
	}
	return equality.Semantic.DeepEqual(strip(a), strip(b))
}

// countResults counts applied objects by result.
