package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
)

// checkArgoCDFields validates the Application fields the spec hands to
// Argo CD as they are, by the rules Argo CD and Kubernetes apply to them:
// the managed namespace's labels and annotations as Kubernetes metadata,
// and Kustomize patches as Kustomize reads them. Types and durations are
// the schema's. An app's syncPolicy is checked where it is written (an
// inherited spec.defaults.syncPolicy is checked once, there).
func (d *Document) checkArgoCDFields(errs *Errors, path string, a *App) {
	if d.has(path + ".syncPolicy") {
		d.checkSyncPolicy(errs, path+".syncPolicy", a.SyncPolicy)
	}
	if a.Source != nil {
		d.checkKustomize(errs, path+".source", a.Source)
	}
	for i := range a.Sources {
		d.checkKustomize(errs, fmt.Sprintf("%s.sources[%d]", path, i), &a.Sources[i])
	}
}

func (d *Document) checkSyncPolicy(errs *Errors, path string, sp *SyncPolicy) {
	if sp == nil {
		return
	}
	d.checkSyncRetry(errs, path+".retry", sp.Retry)
	if sp.ManagedNamespaceMetadata == nil {
		return
	}
	add := func(p, format string, args ...any) { *errs = append(*errs, d.At(p, format, args...)) }
	mp := path + ".managedNamespaceMetadata"
	m := sp.ManagedNamespaceMetadata
	for _, k := range slices.Sorted(maps.Keys(m.Labels)) {
		for _, msg := range validation.IsQualifiedName(k) {
			add(mp+".labels."+k, "label key %q: %s", k, msg)
		}
		for _, msg := range validation.IsValidLabelValue(m.Labels[k]) {
			add(mp+".labels."+k, "label %s: value %q: %s", k, m.Labels[k], msg)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Annotations)) {
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			add(mp+".annotations."+k, "annotation key %q: %s", k, msg)
		}
	}
	if err := apivalidation.ValidateAnnotationsSize(m.Annotations); err != nil {
		add(mp+".annotations", "%v", err)
	}
}

func (d *Document) checkKustomize(errs *Errors, path string, s *Source) {
	if s.Kustomize == nil {
		return
	}
	for j, p := range s.Kustomize.Patches {
		pp := fmt.Sprintf("%s.kustomize.patches[%d]", path, j)
		switch {
		case p.Path == "" && p.Patch == "":
			*errs = append(*errs, d.At(pp, "set path (a patch file) or patch (inline): Kustomize needs one"))
		case p.Path != "" && p.Patch != "":
			*errs = append(*errs, d.At(pp, "set either path or patch, not both: Kustomize refuses both"))
		}
	}
}
