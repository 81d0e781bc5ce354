package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v2/util/glob"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
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
}

// own is what a parent deploys besides its children: the sources to keep
// for its own app, the same sources as raw JSON for the round trip, and
// what could not be separated from the children.
type own struct {
	sources []appv1.ApplicationSource
	multi   bool
	// excluded: per kept source index (in the original), the exclude glob
	// that leaves the children's files out.
	excluded map[int]string
	dropped  []int // sources of nothing but Applications
	lost     []string
}

var argoManifestFile = regexp.MustCompile(`^.*\.(yaml|yml|json|jsonnet)$`)

// normalizeRepo compares repository URLs the way they name one repository:
// no scheme or user, scp-style host:path as host/path, host in lower case,
// no trailing "/" or ".git".
func normalizeRepo(u string) string {
	u = strings.TrimSpace(u)
	scp := true
	if i := strings.Index(u, "://"); i >= 0 {
		u, scp = u[i+3:], false
	}
	if at := strings.Index(u, "@"); at >= 0 && (strings.Index(u, "/") < 0 || at < strings.Index(u, "/")) {
		u = u[at+1:]
	}
	host, rest, _ := strings.Cut(u, "/")
	if scp {
		if h, p, ok := strings.Cut(host, ":"); ok {
			host, rest = h, strings.TrimPrefix(p+"/"+rest, "/")
		}
	}
	rest = strings.TrimRight(rest, "/")
	rest = strings.TrimSuffix(rest, ".git")
	rest = strings.TrimRight(rest, "/")
	return strings.ToLower(host) + "/" + rest
}

// isDirectorySource: Argo CD renders the path as plain manifests (no chart,
// no Helm, Kustomize or plugin settings, no kustomization or Chart.yaml).
func isDirectorySource(s appv1.ApplicationSource, dir string) bool {
	if s.Chart != "" || s.Path == "" || s.Helm != nil || s.Kustomize != nil || s.Plugin != nil {
		return false
	}
	for _, f := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization", "Chart.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return false
		}
	}
	return true
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
	if len(byFile) == 0 {
		return nil
	}
	root, repo := b.repoRoot(dirs)
	if root == "" {
		return nil
	}
	sources := map[*app][]layoutSource{}
	claims := map[*app][]*app{} // child → parents that hold it
	for _, p := range b.all {
		for i, s := range sourcesOf(p.m.App) {
			if normalizeRepo(s.RepoURL) != repo {
				continue
			}
			dir := path.Join(root, path.Clean("/" + s.Path)[1:])
			if !isDirectorySource(s, filepath.FromSlash(dir)) {
				continue
			}
			ls := layoutSource{index: i}
			var d appv1.ApplicationSourceDirectory
			if s.Directory != nil {
				d = *s.Directory
			}
			for _, f := range manifestFiles(dir, d) {
				kids := byFile[path.Join(dir, f)]
				switch hasOther := otherObjects(path.Join(dir, f)); {
				case len(kids) == 0:
					ls.other = append(ls.other, f)
				case hasOther:
					ls.mixed = append(ls.mixed, f)
				default:
					ls.appFiles = append(ls.appFiles, f)
				}
				for _, k := range kids {
					if k != p && k.parentKind == "" {
						claims[k] = append(claims[k], p)
					}
				}
			}
			if len(ls.appFiles)+len(ls.mixed) > 0 {
				sources[p] = append(sources[p], ls)
			}
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
		b.note("Applications in the folder of more than one parent (Argo CD makes them fight over them), the first parent kept: %s", summarize(shared, 6))
	}
	out := map[*app]*own{}
	for p, ls := range sources {
		if o := ownOf(p, ls); o != nil {
			out[p] = o
		}
	}
	return out
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
					count[cand{x[:len(x)-len(rel)], normalizeRepo(s.RepoURL)}]++
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

// manifestFiles lists what Argo CD reads from a directory source, relative
// to it, sorted: manifest file names, subfolders only with recurse, then
// exclude and include globs on the relative path (argo-cd util/glob).
func manifestFiles(dir string, d appv1.ApplicationSourceDirectory) []string {
	var out []string
	_ = filepath.WalkDir(filepath.FromSlash(dir), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(filepath.FromSlash(dir), p)
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			if rel != "." && !d.Recurse {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() || !argoManifestFile.MatchString(e.Name()) {
			return nil
		}
		// glob.Match without its log line: a pattern that does not
		// compile matches nothing, as in Argo CD.
		if ok, err := glob.MatchWithError(d.Exclude, rel); d.Exclude != "" && ok && err == nil {
			return nil
		}
		if ok, err := glob.MatchWithError(d.Include, rel); d.Include != "" && (!ok || err != nil) {
			return nil
		}
		out = append(out, rel)
		return nil
	})
	sort.Strings(out)
	return out
}

// otherObjects says whether a manifest file holds an object that is not an
// Application (a file that does not parse counts as one: Argo CD would
// apply or reject it, never skip it as an Application).
func otherObjects(file string) bool {
	data, err := os.ReadFile(filepath.FromSlash(file))
	if err != nil {
		return true
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Items      []struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			} `json:"items"`
		}
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			return true
		}
		if obj.Kind == "" && obj.APIVersion == "" {
			continue
		}
		if strings.HasSuffix(obj.Kind, "List") {
			for _, it := range obj.Items {
				if it.Kind != "Application" || !strings.HasPrefix(it.APIVersion, "argoproj.io/") {
					return true
				}
			}
			continue
		}
		if obj.Kind != "Application" || !strings.HasPrefix(obj.APIVersion, "argoproj.io/") {
			return true
		}
	}
}

// ownOf is what parent p deploys itself, nil when nothing but its
// children: a source of nothing but Applications is dropped; a directory
// that also holds other manifests is kept, its Application-only files
// excluded; every other source (a chart, another repository, plain
// manifests) is kept as it is.
func ownOf(p *app, ls []layoutSource) *own {
	srcs := sourcesOf(p.m.App)
	o := &own{multi: len(p.m.App.Spec.Sources) > 0, excluded: map[int]string{}}
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
			o.sources = append(o.sources, s)
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
			pat, ok := excludeGlob(s.Directory.Exclude, append(append([]string(nil), l.appFiles...), l.mixed...))
			if !ok {
				o.lost = append(o.lost, "exclude "+s.Directory.Exclude+" cannot be combined")
				o.dropped = append(o.dropped, i)
				continue
			}
			s.Directory.Exclude = pat
			o.excluded[i] = pat
			o.sources = append(o.sources, s)
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

// excludeGlob adds files to an exclude glob: gobwas/glob alternatives
// "{a.yaml,b.yaml}", special characters escaped.
func excludeGlob(existing string, files []string) (string, bool) {
	var alts []string
	if existing != "" {
		if strings.ContainsAny(existing, "{},") {
			return "", false
		}
		alts = append(alts, existing)
	}
	for _, f := range files {
		var e strings.Builder
		for _, r := range f {
			if strings.ContainsRune(`*?[]{},\!`, r) {
				e.WriteRune('\\')
			}
			e.WriteRune(r)
		}
		alts = append(alts, e.String())
	}
	if len(alts) == 1 {
		return alts[0], true
	}
	return "{" + strings.Join(alts, ",") + "}", true
}

// ownManifest is the Application a self app is compared with in the round
// trip: the original without its children's source or files, as the
// import meant it (a note says so), so only what the spec cannot express
// is reported.
func ownManifest(m *Manifest, o *own) *Manifest {
	raw, _ := json.Marshal(m.Raw)
	var cp map[string]any
	_ = json.Unmarshal(raw, &cp)
	specObj, _ := cp["spec"].(map[string]any)
	setExclude := func(src map[string]any, pat string) {
		d, _ := src["directory"].(map[string]any)
		if d == nil {
			d = map[string]any{}
			src["directory"] = d
		}
		d["exclude"] = pat
	}
	if list, ok := specObj["sources"].([]any); ok {
		var kept []any
		for i, s := range list {
			if slices.Contains(o.dropped, i) {
				continue
			}
			if pat, ok := o.excluded[i]; ok {
				if src, ok := s.(map[string]any); ok {
					setExclude(src, pat)
				}
			}
			kept = append(kept, s)
		}
		specObj["sources"] = kept
	} else if src, ok := specObj["source"].(map[string]any); ok {
		if pat, ok := o.excluded[0]; ok {
			setExclude(src, pat)
		}
	}
	out := *m
	out.Raw = cp
	return &out
}
