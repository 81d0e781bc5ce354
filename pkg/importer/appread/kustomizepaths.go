package appread

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/types"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/safeyaml"
)

// What a kustomization may name. Kustomize fetches whatever it cannot
// read locally: a URL (http, https, ssh, file, git::), an scp-style
// user@host:path, github.com/org/repo in any case, and each newer release
// adds forms. So nothing is matched against remote forms here: an entry is
// accepted only when it is a local path that exists, as a regular file or
// a folder, inside the allowed root once symbolic links are resolved; every
// other entry is refused, named, before Kustomize runs. Kustomize's own
// parser treats a path with ":" or "@", or starting with github.com, as a
// repository even when such a folder exists: those are refused too.

// kustomizePath is one path a kustomization names, and its field.
type kustomizePath struct {
	field, entry string
	inline       bool // may be an inline object instead of a path
}

// kustomizePaths lists every path field of k that Kustomize loads: the
// resources, bases and components it builds, and the files it reads
// (patches, CRDs, configurations, generator and transformer configs, the
// OpenAPI schema, generators' files and env files, replacements).
func kustomizePaths(k *types.Kustomization) []kustomizePath {
	var out []kustomizePath
	add := func(field string, inline bool, entries ...string) {
		for _, e := range entries {
			if e != "" {
				out = append(out, kustomizePath{field: field, entry: e, inline: inline})
			}
		}
	}
	add("resources", false, k.Resources...)
	add("bases", false, k.Bases...) //nolint:staticcheck // Bases: still read by Kustomize
	add("components", false, k.Components...)
	add("crds", false, k.Crds...)
	add("configurations", false, k.Configurations...)
	add("generators", true, k.Generators...)
	add("transformers", true, k.Transformers...)
	add("validators", true, k.Validators...)
	add("openapi.path", false, k.OpenAPI["path"])
	for _, p := range k.Patches {
		add("patches.path", false, p.Path)
	}
	for _, p := range k.PatchesJson6902 { //nolint:staticcheck // still read by Kustomize
		add("patchesJson6902.path", false, p.Path)
	}
	for _, p := range k.PatchesStrategicMerge { //nolint:staticcheck // still read by Kustomize
		add("patchesStrategicMerge", true, string(p))
	}
	for _, r := range k.Replacements {
		add("replacements.path", false, r.Path)
	}
	gens := func(field string, args []types.GeneratorArgs) {
		for _, g := range args {
			for _, f := range g.FileSources {
				if _, p, ok := strings.Cut(f, "="); ok {
					f = p
				}
				add(field+".files", false, f)
			}
			add(field+".envs", false, g.EnvSources...)
			add(field+".env", false, g.EnvSource) //nolint:staticcheck // still read by Kustomize
		}
	}
	var cm, sec []types.GeneratorArgs
	for _, g := range k.ConfigMapGenerator {
		cm = append(cm, g.GeneratorArgs)
	}
	for _, g := range k.SecretGenerator {
		sec = append(sec, g.GeneratorArgs)
	}
	gens("configMapGenerator", cm)
	gens("secretGenerator", sec)
	return out
}

// localEntry resolves entry, named in the kustomization of dir: the path
// (cleaned, not resolved: what Kustomize reads) and whether it is a
// folder, or why it is refused. root is the allowed root, resolved.
func localEntry(dir, root string, p kustomizePath) (path string, isDir bool, why string) {
	e := p.entry
	if p.inline && strings.Contains(e, "\n") {
		// Kustomize reads it as an inline object when it is one.
		if n, err := safeyaml.Node([]byte(e)); err == nil && len(n.Content) == 1 && n.Content[0].Tag == "!!map" {
			return "", false, ""
		}
		return "", false, "neither an inline object nor a local path"
	}
	if strings.ContainsAny(e, ":@") || strings.HasPrefix(strings.ToLower(e), "github.com") {
		return "", false, "not a local path (Kustomize reads it as a URL or a Git repository)"
	}
	path = filepath.Clean(filepath.Join(dir, e))
	if filepath.IsAbs(e) {
		path = filepath.Clean(e)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false, err.Error()
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", false, "no such file or folder"
	}
	if !inside(root, real) {
		return "", false, fmt.Sprintf("outside %s, the repository or folder imported", root)
	}
	fi, err := os.Stat(real)
	switch {
	case err != nil:
		return "", false, err.Error()
	case fi.IsDir():
		return path, true, ""
	case !fi.Mode().IsRegular():
		return "", false, readlimit.Kind(fi.Mode()) + ", not a file or folder"
	}
	return path, false, ""
}

// inside: p is root or below it (both resolved).
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// allowedRoot is what a kustomization of the input may reach, resolved:
// the Git work tree holding arg (one repository, as Argo CD reads it), or
// arg's folder when it is in none.
func allowedRoot(arg string) string {
	abs, err := filepath.Abs(arg)
	if err != nil {
		return arg
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		abs = filepath.Dir(abs)
	}
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs
		}
		d = parent
	}
}
