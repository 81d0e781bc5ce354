package appread

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/types"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/safeyaml"
)

// A folder with a kustomization is read as its build, as Argo CD renders
// it: the files and folders beside the kustomization that it does not list
// are not read. Where those hold Applications (a root.yaml and an apps/
// folder next to a kustomization of other things), the import says so and
// how to read them, instead of "no Argo CD Application found".

// maxUnreadFiles bounds the files looked into below one unread folder.
const maxUnreadFiles = 1000

// unreadBeside records what dir holds beside its kustomization that the
// kustomization does not reference and that declares Applications or
// ApplicationSets.
func (in *Input) unreadBeside(dir string) {
	file := kustomizationFile(dir)
	data, err := readlimit.ReadFile(file, readlimit.Import)
	if err != nil {
		return // reported where the kustomization is read
	}
	var k types.Kustomization
	if safeyaml.UnmarshalJSON(data, &k) != nil {
		return
	}
	used := map[string]bool{}
	for _, r := range kustomizationRefs(&k) {
		r = filepath.ToSlash(filepath.Clean(r))
		if first, _, _ := strings.Cut(r, "/"); first != "" && first != ".." && first != "." {
			used[first] = true
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var names, paths []string
	for _, e := range entries {
		n := e.Name()
		p := filepath.Join(dir, n)
		if strings.HasPrefix(n, ".") || used[n] || p == file || in.given(p) {
			continue
		}
		if e.IsDir() && declaresApps(p) {
			names, paths = append(names, n+"/"), append(paths, p)
		} else if !e.IsDir() && isManifest(p) && declaresApps(p) {
			names, paths = append(names, n), append(paths, p)
		}
	}
	if len(names) == 0 {
		return
	}
	in.Unread = append(in.Unread, fmt.Sprintf("%s is a Kustomize folder, read as its build (as Argo CD renders it): %s beside its kustomization %s Applications "+
		"it does not list, not read; to import them too: deployctl import %s %s",
		dir, strings.Join(names, ", "), map[bool]string{true: "holds", false: "hold"}[len(names) == 1], strings.Join(in.args, " "), strings.Join(paths, " ")))
}

// given: p is a path given to Read, read on its own (a folder above it
// does not count: there the kustomization hid it).
func (in *Input) given(p string) bool {
	for _, a := range in.args {
		if filepath.Clean(a) == p {
			return true
		}
	}
	return false
}

// kustomizationRefs are the local paths a kustomization reads.
func kustomizationRefs(k *types.Kustomization) []string {
	refs := append(append(append(append([]string{}, k.Resources...), k.Bases...), k.Components...), k.Crds...) //nolint:staticcheck // Bases: still read by Kustomize
	refs = append(append(append(append(refs, k.Configurations...), k.Generators...), k.Transformers...), k.Validators...)
	refs = append(refs, k.OpenAPI["path"])
	for _, p := range append(k.Patches, k.PatchesJson6902...) { //nolint:staticcheck // PatchesJson6902: still read by Kustomize
		refs = append(refs, p.Path)
	}
	for _, p := range k.PatchesStrategicMerge { //nolint:staticcheck // still read by Kustomize
		refs = append(refs, string(p))
	}
	for _, r := range k.Replacements {
		refs = append(refs, r.Path)
	}
	kv := func(s types.KvPairSources) {
		for _, f := range append(append([]string{}, s.FileSources...), s.EnvSources...) {
			_, p, ok := strings.Cut(f, "=")
			if !ok {
				p = f
			}
			refs = append(refs, p)
		}
	}
	for _, g := range k.ConfigMapGenerator {
		kv(g.KvPairSources)
	}
	for _, g := range k.SecretGenerator {
		kv(g.KvPairSources)
	}
	if k.HelmGlobals != nil {
		refs = append(refs, k.HelmGlobals.ChartHome)
	}
	return refs
}

// declaresApps: a manifest file, or one below a folder, declares an
// Application or ApplicationSet (kindLine), within maxUnreadFiles files.
func declaresApps(p string) bool {
	found, n := false, 0
	_ = filepath.WalkDir(p, func(f string, e fs.DirEntry, err error) error {
		if err != nil || found || n >= maxUnreadFiles {
			return filepath.SkipAll
		}
		if e.IsDir() {
			if f != p && strings.HasPrefix(e.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !isManifest(f) {
			return nil
		}
		n++
		data, err := readlimit.ReadFile(f, readlimit.Import)
		found = err == nil && kindLine(data) > 0
		return nil
	})
	return found
}

// unreadSorted is Unread in a stable order, for notes and errors.
func (in *Input) unreadSorted() []string {
	out := append([]string(nil), in.Unread...)
	sort.Strings(out)
	return out
}
