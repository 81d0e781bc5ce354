package importer

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"

	"github.com/deployctl/deployctl/pkg/importer/argorules"
)

// A root Application imported alone (its file, not its folder) has no
// children in the input, so it becomes one app that would recreate them
// all. Its source path usually points into the same checkout: when a
// folder up the tree from its file holds that path, with Applications or
// ApplicationSets the input did not read, the import says where they are.

// maxUp bounds the folders looked at above an Application's file for the
// checkout its source path is relative to (the .git folder stops it
// earlier).
const maxUp = 8

// unreadChildren notes, for each root without children read from a file,
// the folder of its source that holds Applications the input lacks.
func (b *builder) unreadChildren() {
	names := map[string]bool{}
	for _, a := range b.all {
		names[a.m.App.Name] = true
		if a.parentKind == "ApplicationSet" {
			names[a.parentName] = true
		}
	}
	for _, a := range b.all {
		if a.children > 0 || a.parent != nil || a.parentKind != "" {
			continue // a parent, or a child: its source is what it deploys
		}
		file, err := filepath.Abs(a.m.File)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		for i, s := range sourcesOf(a.m.App) {
			if dir, missing := unreadFolder(filepath.Dir(file), s, a.m.V3.Source(i).AnyExtension(), names); dir != "" {
				b.note("%s: its children in %s were not read (%s): import the folder: deployctl import %s",
					a.key, display(dir), strings.Join(missing, ", "), display(commonDir(filepath.Dir(file), dir)))
				break
			}
		}
	}
}

// unreadFolder is the folder source s names, looked for from dir upwards,
// when it renders Applications or ApplicationSets not among names; and
// their names.
func unreadFolder(dir string, s appv1.ApplicationSource, anyExtension bool, names map[string]bool) (string, []string) {
	if s.Chart != "" || s.Path == "" || filepath.IsAbs(s.Path) {
		return "", nil
	}
	rel := filepath.FromSlash(filepath.Clean("/" + s.Path)[1:])
	for x, n := dir, 0; n < maxUp; x, n = filepath.Dir(x), n+1 {
		cand := filepath.Join(x, rel)
		if fi, err := os.Stat(cand); err == nil && fi.IsDir() {
			var objs []argorules.Object
			switch {
			case argorules.IsKustomizeSource(s, cand):
				objs, _ = argorules.KustomizeObjects(cand, s.Kustomize)
			case argorules.IsDirectorySource(s, cand):
				var d appv1.ApplicationSourceDirectory
				if s.Directory != nil {
					d = *s.Directory
				}
				for _, f := range argorules.ManifestFiles(cand, d, anyExtension) {
					o, _ := argorules.ObjectsIn(filepath.Join(cand, f))
					objs = append(objs, o...)
				}
			}
			var missing []string
			for _, o := range objs {
				if (isArgo(o, "Application") || isArgo(o, "ApplicationSet")) && !names[o.Name] {
					missing = append(missing, o.Kind+" "+o.Name)
				}
			}
			if len(missing) > 0 {
				sort.Strings(missing)
				if len(missing) > 6 {
					missing = append(missing[:6], "…")
				}
				return cand, missing
			}
			return "", nil
		}
		if _, err := os.Stat(filepath.Join(x, ".git")); err == nil || x == filepath.Dir(x) {
			break // the checkout's top, or the filesystem's
		}
	}
	return "", nil
}

// commonDir is the nearest folder holding both a and b.
func commonDir(a, b string) string {
	for x := a; ; x = filepath.Dir(x) {
		if x == b || strings.HasPrefix(b, strings.TrimSuffix(x, string(filepath.Separator))+string(filepath.Separator)) {
			return x
		}
		if x == filepath.Dir(x) {
			return x
		}
	}
}

// display is p relative to the working folder when below it.
func display(p string) string {
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return p
}
