// Package apply is the executor's apply phase: server-side apply of the
// objects deploy and teardown ensure before they run a workflow, and what
// each apply did (created, configured, unchanged; "would" under dry run).
package apply

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/deployctl/deployctl/pkg/report"
)

// Object is one manifest to apply.
type Object struct {
	GVR schema.GroupVersionResource
	U   *unstructured.Unstructured
	// Manager is the server-side apply field manager (required).
	Manager string
}

func (o Object) String() string {
	if ns := o.U.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", o.U.GetKind(), ns, o.U.GetName())
	}
	return o.U.GetKind() + " " + o.U.GetName()
}

// All server-side applies objs in order, forcing conflicts (deployctl
// is the authority for what it generates). It is idempotent: the API
// server does not write an apply that changes nothing, so the object's
// resourceVersion stays, and that is how "unchanged" is told apart. With
// dryRun the server runs the whole apply (admission, validation, merge)
// without persisting; the outcome then compares the would-be object with
// the live one.
func All(ctx context.Context, dyn dynamic.Interface, objs []Object, dryRun bool) ([]report.Applied, error) {
	var out []report.Applied
	for _, o := range objs {
		res, err := applyOne(ctx, dyn, o, dryRun)
		if err != nil {
			return out, fmt.Errorf("applying %s: %w", o, err)
		}
		out = append(out, report.Applied{Kind: o.U.GetKind(), Namespace: o.U.GetNamespace(), Name: o.U.GetName(), Result: res})
	}
	return out, nil
}

func applyOne(ctx context.Context, dyn dynamic.Interface, o Object, dryRun bool) (string, error) {
	var rc dynamic.ResourceInterface = dyn.Resource(o.GVR)
	if ns := o.U.GetNamespace(); ns != "" {
		rc = dyn.Resource(o.GVR).Namespace(ns)
	}
	live, err := rc.Get(ctx, o.U.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		live = nil
	case err != nil:
		return "", err
	}
	opts := metav1.ApplyOptions{FieldManager: o.Manager, Force: true}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	after, err := rc.Apply(ctx, o.U.GetName(), o.U, opts)
	if err != nil {
		return "", err
	}
	switch {
	case live == nil && dryRun:
		return report.WouldCreate, nil
	case live == nil:
		return report.Created, nil
	case dryRun && SameObject(live, after):
		return report.Unchanged, nil
	case dryRun:
		return report.WouldConfigure, nil
	case after.GetResourceVersion() == live.GetResourceVersion():
		return report.Unchanged, nil
	}
	return report.Configured, nil
}

// SameObject compares two versions of an object, ignoring what a dry-run
// apply may touch without changing anything (field manager bookkeeping).
func SameObject(a, b *unstructured.Unstructured) bool {
	strip := func(u *unstructured.Unstructured) map[string]any {
		c := u.DeepCopy()
		unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
		unstructured.RemoveNestedField(c.Object, "metadata", "resourceVersion")
		return c.Object
	}
	return equality.Semantic.DeepEqual(strip(a), strip(b))
}
