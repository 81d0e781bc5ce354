package importer

import (
	"encoding/json"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"

	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/importer/argorules"
	"github.com/deployctl/deployctl/pkg/importer/internal/words"
)

// Git layout: Applications read from a Git checkout carry no owner
// reference or tracking label. There, as in Argo CD, a parent is an
// Application one of whose sources is a directory source, in the same
// repository, whose manifests (argo-cd reposerver/repository findManifests:
// recurse, include, exclude) are other Applications' files.

// layoutSource is one source of a parent that holds Applications.
type layoutSource struct {
	index int // in sourcesOf
	// appFiles hold only Applications; mixed hold Applications and other
	// objects; other hold no Application.
	appFiles, mixed, other []string // relative to the source's path
	// waves of the objects in other, as Argo CD orders them in the
	// parent's sync; unknown when a file could not be read.
	waves   []int
	unknown bool
	// covered: what it renders that deployctl creates (its children, the
	// parent itself, ApplicationSets the import expanded): never deployed
	// by the parent's own app (one manager).
	covered []argorules.Object
	// kustomize: a Kustomize folder, its objects read from its build (other
	// names them, as "Kind name").
	kustomize bool
}

// own is what a parent deploys besides its children: the sources to keep
// for its own app, the same sources as raw JSON for the round trip, and
// what could not be separated from the children.
type own struct {
	sources []appv1.ApplicationSource
	// orig: per kept source, its index in the original's sources.
	orig  []int
	multi bool
	// excluded: per kept source index (in the original), the exclude glob
	// that leaves the children's files out.
	excluded map[int]string
	dropped  []int // sources of nothing but Applications
	// patched: per kept Kustomize source index, its patches with those
	// that delete what deployctl creates.
	patched map[int]appv1.KustomizePatches
	lost    []string
	// lo and hi bound the waves of what it deploys itself (rule 5); a
	// source whose objects are not read here (a chart, another repository)
	// makes them unbounded.
	lo, hi int
}

// gitLayout finds the parents of the apps that have none from metadata,
// from where their files are. It returns, per parent, what it deploys
// besides its children.
func (b *builder) gitLayout() map[*app]*own {
	byFile := map[string][]*app{}
	var dirs []string
	for _, a := range b.all {
		abs, err := filepath.Abs(a.m.File)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(abs); err != nil || fi.IsDir() {
			continue
		}
		abs = filepath.ToSlash(abs)
		if byFile[abs] == nil {
			dirs = append(dirs, path.Dir(abs))
		}
		byFile[abs] = append(byFile[abs], a)
	}
	for _, d := range b.built {
		if abs, err := filepath.Abs(d); err == nil {
			dirs = append(dirs, filepath.ToSlash(abs))
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	root, repo := b.repoRoot(dirs)
	if root == "" {
		return nil
	}
	b.root, b.repo, b.readDirs = root, repo, dirs
	// The Applications each expanded ApplicationSet generated: a parent
	// that renders the ApplicationSet renders them too (through the
	// controller), so deployctl creating them is a second manager.
	expanded := map[string][]*app{}
	for _, a := range b.all {
		if a.parentKind == "ApplicationSet" {
			k := a.m.App.Namespace + "/" + a.parentName
			expanded[k] = append(expanded[k], a)
		}
	}
	b.expanded = expanded
	sources := map[*app][]layoutSource{}
	claims := map[*app][]*app{} // child → parents that hold it
	for _, p := range b.all {
		for i, s := range sourcesOf(p.m.App) {
			if argorules.NormalizeRepo(s.RepoURL) != repo {
				continue
			}
			dir := path.Join(root, path.Clean("/" + s.Path)[1:])
			if argorules.IsKustomizeSource(s, filepath.FromSlash(dir)) {
				if !b.readBelow(dir) {
					continue // no Application of the input can come from it
				}
				if ls, ok := b.kustomizeLayout(p, i, s, dir, expanded, claims); ok {
					sources[p] = append(sources[p], ls)
				}
				continue
			}
			if !argorules.IsDirectorySource(s, filepath.FromSlash(dir)) {
				continue
			}
			ls := layoutSource{index: i}
			var d appv1.ApplicationSourceDirectory
			if s.Directory != nil {
				d = *s.Directory
			}
			for _, f := range argorules.ManifestFiles(dir, d, p.m.V3.Source(i).AnyExtension()) {
				kids := byFile[path.Join(dir, f)]
				objs, ok := argorules.ObjectsIn(path.Join(dir, f))
				hasOther := !ok
				var waves []int
				covers := len(kids) > 0
				for _, o := range objs {
					if isArgo(o, "Application") {
						continue
					}
					if isArgo(o, "ApplicationSet") && len(expandedBy(o, p, expanded)) > 0 {
						covers = true
						ls.covered = append(ls.covered, o)
						b.setRenderedBy(expandedBy(o, p, expanded), p)
						continue
					}
					hasOther = true
					if o.Counts {
						waves = append(waves, o.Lo, o.Hi)
					}
				}
				switch {
				case !covers:
					ls.other = append(ls.other, f)
					ls.waves = append(ls.waves, waves...)
					ls.unknown = ls.unknown || !ok
				case hasOther:
					ls.mixed = append(ls.mixed, f)
				default:
					ls.appFiles = append(ls.appFiles, f)
				}
				for _, k := range kids {
					ls.covered = append(ls.covered, argorules.Object{APIVersion: "argoproj.io/v1alpha1", Kind: "Application", Name: k.m.App.Name, Namespace: k.m.App.Namespace})
					if k != p && k.parentKind == "" {
						claims[k] = append(claims[k], p)
					}
				}
			}
			if fi, err := os.Stat(filepath.FromSlash(dir)); err != nil || !fi.IsDir() {
				ls.unknown = true // not in the input: what it holds is not known
			}
			sources[p] = append(sources[p], ls)
		}
	}
	var shared []string
	for _, k := range b.all {
		ps := claims[k]
		if len(ps) == 0 {
			continue
		}
		// Two parents holding one file: Argo CD would have both fight over
		// it; the one with the deepest path (the nearest folder) keeps it.
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].key < ps[j].key })
		k.parent, k.parentBy = ps[0], "git layout"
		if len(ps) > 1 {
			var names []string
			for _, p := range ps {
				names = append(names, p.key)
			}
			shared = append(shared, k.key+" ("+strings.Join(names, ", ")+")")
		}
	}
	if len(shared) > 0 {
		b.note("Applications in the folder of more than one parent (Argo CD makes them fight over them), the first parent kept: %s", words.Summarize(shared, 6))
	}
	out := map[*app]*own{}
	for p, ls := range sources {
		for _, l := range ls {
			p.covers = p.covers || len(l.covered) > 0
		}
		if o := ownOf(p, ls); o != nil {
			out[p] = o
		}
	}
	return out
}

// readBelow: the input read a file in dir or below it (a Kustomize build
// counts by its folder). A Kustomize source elsewhere is not built: it
// holds no Application of the input (a child's own kustomization, say).
func (b *builder) readBelow(dir string) bool {
	for _, d := range b.readDirs {
		if d == dir || strings.HasPrefix(d, strings.TrimSuffix(dir, "/")+"/") {
			return true
		}
	}
	return false
}

// repoRoot is the folder that source paths are relative to: the one most
// sources' paths end in a folder of an input file below, and the
// repository those sources name (normalized).
func (b *builder) repoRoot(dirs []string) (string, string) {
	type cand struct{ root, repo string }
	// Every folder an input file is in or below, by its last element, so a
	// source path is matched against the few folders of its own name.
	byBase := map[string][]string{}
	seen := map[string]bool{}
	for _, d := range dirs {
		for x := d; x != "/" && x != "." && !seen[x]; x = path.Dir(x) {
			seen[x] = true
			byBase[path.Base(x)] = append(byBase[path.Base(x)], x)
		}
	}
	count := map[cand]int{}
	for _, p := range b.all {
		for _, s := range sourcesOf(p.m.App) {
			if s.Chart != "" || s.Path == "" {
				continue
			}
			rel := path.Clean("/" + s.Path)
			if rel == "/" {
				continue
			}
			for _, x := range byBase[path.Base(rel)] {
				if strings.HasSuffix(x, rel) && len(x) > len(rel) {
					count[cand{x[:len(x)-len(rel)], argorules.NormalizeRepo(s.RepoURL)}]++
				}
			}
		}
	}
	var best cand
	n := 0
	for c, k := range count {
		if k > n || (k == n && (len(c.root) < len(best.root) || len(c.root) == len(best.root) && c.root+c.repo < best.root+best.repo)) {
			best, n = c, k
		}
	}
	if best.root == "" {
		best.root = "/"
	}
	if n == 0 {
		return "", ""
	}
	return best.root, best.repo
}

// ownOf is what parent p deploys itself, nil when nothing but its
// children: a source of nothing but Applications is dropped; a directory
// that also holds other manifests is kept, its Application-only files
// excluded; every other source (a chart, another repository, plain
// manifests) is kept as it is.
func ownOf(p *app, ls []layoutSource) *own {
	srcs := sourcesOf(p.m.App)
	o := &own{multi: len(p.m.App.Spec.Sources) > 0, excluded: map[int]string{}, patched: map[int]appv1.KustomizePatches{}, lo: math.MaxInt, hi: math.MinInt}
	span := func(ws ...int) {
		for _, w := range ws {
			o.lo, o.hi = min(o.lo, w), max(o.hi, w)
		}
	}
	byIndex := map[int]layoutSource{}
	for _, l := range ls {
		byIndex[l.index] = l
	}
	for i, s := range srcs {
		l, holds := byIndex[i]
		switch {
		case !holds:
			if s.Ref != "" && s.Path == "" && s.Chart == "" {
				continue // a values reference deploys nothing
			}
			o.sources, o.orig = append(o.sources, s), append(o.orig, i)
			span(math.MinInt, math.MaxInt) // not read here
		case l.kustomize && len(l.covered) > 0 && len(l.other) == 0:
			o.dropped = append(o.dropped, i)
		case l.kustomize && len(l.covered) > 0:
			s = *s.DeepCopy()
			if s.Kustomize == nil {
				s.Kustomize = &appv1.ApplicationSourceKustomize{}
			}
			s.Kustomize.Patches = append(s.Kustomize.Patches, deletePatches(l.covered)...)
			o.patched[i] = s.Kustomize.Patches
			o.sources, o.orig = append(o.sources, s), append(o.orig, i)
			span(l.waves...)
		case len(l.appFiles) == 0 && len(l.mixed) == 0:
			o.sources, o.orig = append(o.sources, s), append(o.orig, i) // manifests only: kept as it is
			span(l.waves...)
			if l.unknown {
				span(math.MinInt, math.MaxInt)
			}
		case len(l.other) == 0 && len(l.mixed) == 0:
			o.dropped = append(o.dropped, i)
		default:
			for _, f := range l.mixed {
				o.lost = append(o.lost, path.Join(s.Path, f))
			}
			s = *s.DeepCopy()
			if s.Directory == nil {
				s.Directory = &appv1.ApplicationSourceDirectory{}
			}
			pat, ok := argorules.ExcludeGlob(s.Directory.Exclude, append(append([]string(nil), l.appFiles...), l.mixed...))
			if !ok {
				o.lost = append(o.lost, "exclude "+s.Directory.Exclude+" cannot be combined")
				o.dropped = append(o.dropped, i)
				continue
			}
			s.Directory.Exclude = pat
			o.excluded[i] = pat
			o.sources, o.orig = append(o.sources, s), append(o.orig, i)
			span(l.waves...)
			if l.unknown {
				span(math.MinInt, math.MaxInt)
			}
		}
	}
	hasSources := false
	for _, s := range o.sources {
		if s.Path != "" || s.Chart != "" {
			hasSources = true
		}
	}
	if !hasSources {
		return &own{dropped: o.dropped, lost: o.lost}
	}
	return o
}

// ownManifest is the Application a self app is compared with in the round
// trip: the original without its children's source or files, as the
// import meant it (a note says so), so only what the spec cannot express
// is reported.
func ownManifest(m *appread.Manifest, o *own) *appread.Manifest {
	cp := m.View()
	specObj, _ := cp["spec"].(map[string]any)
	setExclude := func(src map[string]any, pat string) {
		d, _ := src["directory"].(map[string]any)
		if d == nil {
			d = map[string]any{}
			src["directory"] = d
		}
		d["exclude"] = pat
	}
	setPatches := func(src map[string]any, i int) {
		ps, ok := o.patched[i]
		if !ok {
			return
		}
		k, _ := src["kustomize"].(map[string]any)
		if k == nil {
			k = map[string]any{}
			src["kustomize"] = k
		}
		var list []any
		raw, _ := json.Marshal(ps)
		_ = json.Unmarshal(raw, &list)
		k["patches"] = list
	}
	if list, ok := specObj["sources"].([]any); ok {
		var kept []any
		for i, s := range list {
			if slices.Contains(o.dropped, i) {
				continue
			}
			if src, ok := s.(map[string]any); ok {
				if pat, ok := o.excluded[i]; ok {
					setExclude(src, pat)
				}
				setPatches(src, i)
			}
			kept = append(kept, s)
		}
		specObj["sources"] = kept
	} else if src, ok := specObj["source"].(map[string]any); ok {
		if pat, ok := o.excluded[0]; ok {
			setExclude(src, pat)
		}
		setPatches(src, 0)
	}
	out := *m
	out.Raw, _ = json.Marshal(cp)
	return &out
}
