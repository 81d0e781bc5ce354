package importer

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/importer/argorules"
	"github.com/deployctl/deployctl/pkg/importer/internal/words"
)

// One manager (README "Import", parent rule P4): every Application the
// spec makes has exactly one manager. deployctl creates each generated
// Application once; none of them may also be rendered by a generated
// Application's source (a parent kept for its own resources, or an app
// that renders itself), directly or through an ApplicationSet the import
// expanded. The self-check renders every generated source that lies in the
// repository read from disk, as Argo CD's repo server would, and refuses
// the spec otherwise: a future path that gives an Application two managers
// fails loudly instead of writing it.

// made is what the check keeps of a generated Application: its identity,
// where its unnamespaced objects go, and its sources.
type made struct {
	name, namespace, destNS string
	sources                 []appv1.ApplicationSource
	v3                      *appread.V3 // the sources' Argo CD 3 fields
}

// madeOf keeps the sources only when there is a checkout to render them
// from (a dump of 10,000 Applications needs none of them).
func (b *builder) madeOf(a *compile.Application) made {
	m := made{name: a.Name, namespace: a.Namespace, destNS: a.Spec.Destination.Namespace}
	if b.root == "" {
		return m
	}
	if len(a.Spec.Sources) > 0 {
		m.sources = append(m.sources, a.Spec.Sources...)
	} else if a.Spec.Source != nil {
		m.sources = append(m.sources, *a.Spec.Source)
	}
	if len(a.V3Fields()) > 0 {
		m.v3 = &appread.V3{}
		raw, _ := json.Marshal(a)
		_ = json.Unmarshal(raw, m.v3)
	}
	return m
}

// oneManager checks the generated Applications (see above).
func (b *builder) oneManager(gen []made) error {
	direct := map[string]string{} // namespace/name → spec app
	nsOf := map[string]string{}   // spec app → its Application's namespace
	var problems []string
	for _, g := range gen {
		k := g.namespace + "/" + g.name
		if prev, ok := direct[k]; ok {
			problems = append(problems, fmt.Sprintf("Application %s is generated twice (apps %s and %s)", k, prev, g.name))
		}
		direct[k] = g.name
		nsOf[g.name] = g.namespace
	}
	if b.root == "" {
		return oneManagerErr(problems)
	}
	// The generated Application an object of the input stands for.
	generatedAs := func(inputKey string) (string, bool) {
		a := b.byKey[inputKey]
		if a == nil || a.name == "" {
			return "", false
		}
		return nsOf[a.name] + "/" + a.name, true
	}
	for _, g := range gen {
		for i, s := range g.sources {
			objs, where := b.renderSource(s, g.v3.Source(i).AnyExtension())
			for _, o := range objs {
				var hits []string
				switch {
				case isArgo(o, "Application"):
					ns := o.Namespace
					if ns == "" {
						ns = g.destNS
					}
					for _, k := range []string{o.Namespace + "/" + o.Name, ns + "/" + o.Name} {
						if gk, ok := generatedAs(k); ok {
							hits = append(hits, gk)
						}
					}
					if _, ok := direct[ns+"/"+o.Name]; ok {
						hits = append(hits, ns+"/"+o.Name)
					}
				case isArgo(o, "ApplicationSet"):
					ns := o.Namespace
					if ns == "" {
						ns = g.destNS
					}
					for _, a := range b.expanded[ns+"/"+o.Name] {
						if gk, ok := generatedAs(a.key); ok {
							hits = append(hits, gk+" (through ApplicationSet "+o.Name+")")
						}
					}
				}
				for _, h := range dedup(hits) {
					owner := strings.SplitN(h, " ", 2)[0]
					problems = append(problems, fmt.Sprintf("Application %s is created by deployctl (app %s) and rendered by app %s's source %d (%s)%s",
						owner, direct[owner], g.name, i, where, strings.TrimPrefix(h, owner)))
				}
			}
		}
	}
	return oneManagerErr(problems)
}

func oneManagerErr(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	return fmt.Errorf("internal: the imported spec gives %s two managers (a bug in the importer; nothing was written):\n  %s",
		words.Plural(len(problems), "Application"), strings.Join(problems, "\n  "))
}

func dedup(s []string) []string {
	sort.Strings(s)
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// renderSource is what a source in the repository read from disk renders,
// as Argo CD's repo server would (a plain directory, or a Kustomize build
// of a folder the input read; a chart or another repository is not
// rendered here), and where.
func (b *builder) renderSource(s appv1.ApplicationSource, anyExtension bool) ([]argorules.Object, string) {
	if argorules.NormalizeRepo(s.RepoURL) != b.repo || s.Path == "" {
		return nil, ""
	}
	dir := filepath.FromSlash(path.Join(b.root, path.Clean("/" + s.Path)[1:]))
	switch {
	case argorules.IsKustomizeSource(s, dir) && b.readBelow(filepath.ToSlash(dir)):
		objs, err := argorules.KustomizeObjects(dir, s.Kustomize)
		if err != nil {
			return nil, ""
		}
		return objs, "kustomize build " + s.Path
	case argorules.IsDirectorySource(s, dir):
		var d appv1.ApplicationSourceDirectory
		if s.Directory != nil {
			d = *s.Directory
		}
		var objs []argorules.Object
		for _, f := range argorules.ManifestFiles(dir, d, anyExtension) {
			o, _ := argorules.ObjectsIn(filepath.Join(dir, f))
			objs = append(objs, o...)
		}
		return objs, "directory " + s.Path
	}
	return nil, ""
}
