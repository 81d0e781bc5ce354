package argorules

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/internal/safeyaml"

	"github.com/deployctl/deployctl/internal/readlimit"
)

// KustomizationFile is the kustomization file Argo CD's repo server finds
// in dir (reposerver discovery: kustomization.yaml, .yml, Kustomization),
// or "".
func KustomizationFile(dir string) string {
	for _, n := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		p := filepath.Join(dir, n)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// IsKustomizeSource: Argo CD builds the path with Kustomize (no chart, no
// Helm, directory or plugin settings, and a kustomization file there).
func IsKustomizeSource(s appv1.ApplicationSource, dir string) bool {
	if s.Chart != "" || s.Path == "" || s.Helm != nil || s.Directory != nil || s.Plugin != nil {
		return false
	}
	return KustomizationFile(dir) != ""
}

// KustomizeObjects builds dir as Argo CD's repo server builds a Kustomize
// source (util/kustomize Build: the source's namePrefix, nameSuffix,
// namespace, components and patches written into the kustomization first;
// the options that change no object's identity are not applied), with
// plugins off and nothing fetched, every file read within the import's
// bound. It is how the layout finds the Applications a parent renders, and
// how the one-manager check sees what a generated Application renders.
func KustomizeObjects(dir string, k *appv1.ApplicationSourceKustomize) ([]Object, error) {
	file := KustomizationFile(dir)
	if file == "" {
		return nil, fmt.Errorf("%s: no kustomization file", dir)
	}
	data, err := readlimit.ReadFile(file, readlimit.Import)
	if err != nil {
		return nil, err
	}
	if k != nil {
		var kz types.Kustomization
		if err := safeyaml.UnmarshalJSON(data, &kz); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if k.NamePrefix != "" {
			kz.NamePrefix = k.NamePrefix
		}
		if k.NameSuffix != "" {
			kz.NameSuffix = k.NameSuffix
		}
		if k.Namespace != "" {
			kz.Namespace = k.Namespace
		}
		kz.Components = append(kz.Components, k.Components...)
		for _, p := range k.Patches {
			tp := types.Patch{Path: p.Path, Patch: p.Patch, Options: p.Options}
			if t := p.Target; t != nil {
				tp.Target = &types.Selector{
					ResId:              resid.ResId{Gvk: resid.Gvk{Group: t.Group, Version: t.Version, Kind: t.Kind}, Name: t.Name, Namespace: t.Namespace},
					AnnotationSelector: t.AnnotationSelector, LabelSelector: t.LabelSelector,
				}
			}
			kz.Patches = append(kz.Patches, tp)
		}
		if data, err = yaml.Marshal(kz); err != nil {
			return nil, err
		}
	}
	fsys := &kustomizeFS{FileSystem: filesys.MakeFsOnDisk(), file: filepath.Clean(file), data: data, read: int64(len(data))}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
	if fsys.err != nil {
		return nil, fsys.err
	}
	if err != nil {
		return nil, fmt.Errorf("%s: kustomize build: %w", dir, err)
	}
	var out []Object
	for _, r := range res.Resources() {
		lo, hi, counts := HookWave(r.GetAnnotations())
		out = append(out, Object{APIVersion: r.GetApiVersion(), Kind: r.GetKind(), Name: r.GetName(), Namespace: r.GetNamespace(), Lo: lo, Hi: hi, Counts: counts})
	}
	return out, nil
}

// kustomizeFS serves the kustomization as Argo CD rewrote it, reads every
// other file from the disk within the import's bound (all files of one
// build together), and writes nothing.
type kustomizeFS struct {
	filesys.FileSystem
	file string
	data []byte
	read int64
	err  error
}

func (f *kustomizeFS) ReadFile(path string) ([]byte, error) {
	if filepath.Clean(path) == f.file {
		return f.data, nil
	}
	data, err := readlimit.ReadFile(path, readlimit.Import-f.read)
	if err != nil {
		if readlimit.IsTooLarge(err) {
			f.err = err
		}
		return nil, err
	}
	f.read += int64(len(data))
	return data, nil
}

func (f *kustomizeFS) WriteFile(path string, _ []byte) error {
	return errors.New(path + ": the import writes no file")
}
