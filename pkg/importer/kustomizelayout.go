package importer

import (
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"

	"github.com/deployctl/deployctl/pkg/importer/argorules"
)

// A parent whose source is a Kustomize folder: Argo CD renders the build,
// so its children are the Applications of the build (found by namespace
// and name, not by file), and the ApplicationSets of the build the import
// expanded stand for the Applications they generate. Its own resources are
// the rest of the build: kept through its own app with Kustomize patches
// that delete what deployctl creates (parent rule P2 in the README).

// kustomizeLayout renders p's source i (in dir) as Argo CD would and
// claims the input's Applications in it. ok is false when the folder does
// not build: then its children are not known, and a note says so.
func (b *builder) kustomizeLayout(p *app, i int, s appv1.ApplicationSource, dir string, expanded map[string][]*app, claims map[*app][]*app) (layoutSource, bool) {
	objs, err := argorules.KustomizeObjects(filepath.FromSlash(dir), s.Kustomize)
	if err != nil {
		b.note("%s: its source %s is a Kustomize folder that does not build here (%v): the Applications it renders are not known, it is kept as it is", p.key, s.Path, err)
		return layoutSource{}, false
	}
	ls := layoutSource{index: i, kustomize: true}
	for _, o := range objs {
		switch {
		case isArgo(o, "Application") && b.rendered(o, p, b.byKey) != nil:
			k := b.rendered(o, p, b.byKey)
			ls.covered = append(ls.covered, o)
			if k != p && k.parentKind == "" {
				claims[k] = append(claims[k], p)
			}
		case isArgo(o, "ApplicationSet") && len(expandedBy(o, p, expanded)) > 0:
			ls.covered = append(ls.covered, o)
			b.setRenderedBy(expandedBy(o, p, expanded), p)
		default:
			ls.other = append(ls.other, o.Kind+" "+o.Name)
			if o.Counts {
				ls.waves = append(ls.waves, o.Lo, o.Hi)
			}
		}
	}
	return ls, true
}

func isArgo(o argorules.Object, kind string) bool {
	return o.Kind == kind && strings.HasPrefix(o.APIVersion, "argoproj.io/")
}

// rendered is the input's Application o stands for: its namespace and
// name; one without a namespace is applied in the parent's destination
// namespace (or read without one).
func (b *builder) rendered(o argorules.Object, p *app, byKey map[string]*app) *app {
	if a := byKey[o.Namespace+"/"+o.Name]; a != nil {
		return a
	}
	if o.Namespace == "" {
		return byKey[p.m.App.Spec.Destination.Namespace+"/"+o.Name]
	}
	return nil
}

// setRenderedBy records that parent p renders the ApplicationSet that
// generated apps (its app leaves it out: P2).
func (b *builder) setRenderedBy(apps []*app, p *app) {
	if b.setParent == nil {
		b.setParent = map[string]*app{}
	}
	for _, a := range apps {
		b.setParent[a.m.App.Namespace+"/"+a.parentName] = p
	}
}

// expandedBy is what the ApplicationSet o generated in the input.
func expandedBy(o argorules.Object, p *app, expanded map[string][]*app) []*app {
	if as := expanded[o.Namespace+"/"+o.Name]; len(as) > 0 || o.Namespace != "" {
		return as
	}
	return expanded[p.m.App.Spec.Destination.Namespace+"/"+o.Name]
}

// deletePatches are the Kustomize patches that take the covered objects
// out of a build: one per kind, `$patch: delete` on a target naming them
// (Kustomize anchors the name pattern: ^(?:a|b)$).
func deletePatches(covered []argorules.Object) appv1.KustomizePatches {
	byKind := map[string][]string{}
	for _, o := range covered {
		n := regexp.QuoteMeta(o.Name)
		if !slices.Contains(byKind[o.Kind], n) {
			byKind[o.Kind] = append(byKind[o.Kind], n)
		}
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var out appv1.KustomizePatches
	for _, k := range kinds {
		names := byKind[k]
		sort.Strings(names)
		out = append(out, appv1.KustomizePatch{
			Target: &appv1.KustomizeSelector{KustomizeResId: appv1.KustomizeResId{
				KustomizeGvk: appv1.KustomizeGvk{Group: "argoproj.io", Kind: k},
				Name:         strings.Join(names, "|"),
			}},
			Patch: "$patch: delete\napiVersion: argoproj.io/v1alpha1\nkind: " + k + "\nmetadata:\n  name: created-by-deployctl\n",
		})
	}
	return out
}
