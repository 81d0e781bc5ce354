package appread

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/safeyaml"
	"github.com/deployctl/deployctl/pkg/importer/argorules"
)

// kustomizationFile is the kustomization file of dir, or "".
func kustomizationFile(dir string) string { return argorules.KustomizationFile(dir) }

// kustomizeRoots are the Kustomize folders to build: those no other one
// in the input uses (as a resource, base or component), so an overlay is
// built once with its bases, and a base is not built again on its own.
// Every path a kustomization names must be local (kustomizepaths.go), and
// Helm charts are refused (no network, no helm); a root that would reach
// one is not built.
func (in *Input) kustomizeRoots(dirs map[string]bool) []string {
	used := map[string]bool{}
	seen := map[string]bool{}
	refused := map[string]bool{} // the folder, or one it uses, was refused
	helm := map[string]*helmFolder{}
	var stack []string // the kustomizations from the root built to dir
	var walk func(dir string) bool
	walk = func(dir string) bool {
		if seen[dir] {
			return refused[dir]
		}
		seen[dir] = true
		file := kustomizationFile(dir)
		if file == "" {
			return false
		}
		stack = append(stack, dir)
		defer func() { stack = stack[:len(stack)-1] }()
		// A problem in a base names the chain that reached it: the file
		// may lie outside every path given.
		problem := func(format string, args ...any) { in.problem(format+reachedVia(stack), args...) }
		before := len(in.Problems)
		defer func() { refused[dir] = refused[dir] || len(in.Problems) > before }()
		data, err := readlimit.ReadFile(file, readlimit.Import)
		if err != nil {
			problem("%v", err)
			return true
		}
		var k types.Kustomization
		if err := safeyaml.UnmarshalJSON(data, &k); err != nil {
			problem("%s: %v", file, err)
			return true
		}
		if len(k.HelmCharts) > 0 || len(k.HelmChartInflationGenerator) > 0 {
			helm[dir] = &helmFolder{file: file, charts: chartNames(&k), chain: append([]string(nil), stack...)}
			refused[dir] = true // decided below, once every root is known
		}
		root := in.allowed
		if root == "" {
			root = allowedRoot(dir)
		}
		for _, p := range kustomizePaths(&k) {
			path, isDir, why := localEntry(dir, root, p)
			if why != "" {
				problem("%s: %s: %q: %s; the import reads the input's own files only, never the network: "+
					"build it first: kustomize build %s | deployctl import -", file, p.field, p.entry, why, stack[0])
				continue
			}
			if isDir {
				used[path] = true
				if walk(path) {
					refused[dir] = true
				}
			}
		}
		return refused[dir] || len(in.Problems) > before
	}
	all := slices.Sorted(maps.Keys(dirs))
	for _, d := range all {
		walk(filepath.Clean(d))
	}
	in.helmFolders(helm, used)
	var roots []string
	for _, d := range all {
		if c := filepath.Clean(d); !used[c] && !refused[c] {
			roots = append(roots, d)
		}
	}
	return roots
}

// kustomize builds dir with the Kustomize API (plugins off, files read
// through the import's bound) and reads its output instead of its files.
func (in *Input) kustomize(dir, arg, folder string) {
	fsys := &boundedFS{FileSystem: filesys.MakeFsOnDisk(), in: in, arg: arg}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
	if fsys.over {
		return
	}
	if err != nil {
		in.problem("%s: kustomize build: %v", dir, err)
		return
	}
	out, err := res.AsYaml()
	if err != nil {
		in.problem("%s: kustomize build: %v", dir, err)
		return
	}
	in.Built = append(in.Built, dir)
	in.parse(dir+" (kustomize build output)", folder, out)
}

// boundedFS counts what Kustomize reads against the argument's bound,
// reads only regular files inside the allowed root, refuses alias bombs
// before Kustomize expands them, and writes nothing.
type boundedFS struct {
	filesys.FileSystem
	in   *Input
	arg  string
	over bool
}

func (f *boundedFS) ReadFile(path string) ([]byte, error) {
	if abs, err := filepath.Abs(path); err == nil && f.in.allowed != "" {
		if real, err := filepath.EvalSymlinks(abs); err == nil && !inside(f.in.allowed, real) {
			return nil, fmt.Errorf("%s: outside %s, the repository or folder imported", path, f.in.allowed)
		}
	}
	data, err := readlimit.ReadFile(path, readlimit.Import)
	if err != nil {
		return nil, err
	}
	// Kustomize expands aliases as it reads: count them first.
	if err := safeyaml.CheckAll(data, &f.in.aliases); safeyaml.IsRefused(err) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !f.in.count(f.arg, int64(len(data))) {
		f.over = true
		return nil, &readlimit.TooLargeError{Name: f.arg, Limit: readlimit.Import}
	}
	return data, nil
}

func (f *boundedFS) WriteFile(path string, _ []byte) error {
	return fmt.Errorf("%s: the import writes no file", path)
}

// chart notes a Helm chart folder: the Applications its templates may hold
// exist only once rendered.
func (in *Input) chart(dir string) {
	var templates []string
	_ = filepath.WalkDir(filepath.Join(dir, "templates"), func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && isManifest(p) {
			templates = append(templates, p)
		}
		return nil
	})
	sort.Strings(templates)
	for _, t := range templates {
		data, err := readlimit.ReadFile(t, readlimit.Import)
		if err != nil {
			in.problem("%v", err)
			return
		}
		if n := kindLine(data); n > 0 {
			in.problem("%s:%d: an Argo CD Application in a Helm chart's template: render it first: helm template %s | deployctl import -", t, n, dir)
			return
		}
	}
	in.NotObjects = append(in.NotObjects, fmt.Sprintf("%s: a Helm chart without Argo CD Applications in its templates, left out", dir))
}

// kindLine is the first line declaring an Application or ApplicationSet.
func kindLine(data []byte) int {
	for i, line := range strings.Split(string(data), "\n") {
		if t := strings.TrimSpace(line); t == "kind: Application" || t == "kind: ApplicationSet" {
			return i + 1
		}
	}
	return 0
}
