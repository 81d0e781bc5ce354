package spec

import (
	"fmt"
	"path"
	"strings"
)

// checkSourcePaths applies Argo CD's rule for source.path (relative, never
// out of the repository) to the source's other path fields, which reach
// the repo server the same way:
//   - kustomize.patches[].path: Kustomize's default load restrictor reads
//     only files inside the kustomization's folder, so the path must be
//     relative and not climb out of it;
//   - helm.valueFiles: Argo CD resolves a file against the source's path
//     (an absolute one against the repository root) and refuses one that
//     resolves out of the repository; URLs and $ref/ files of another
//     source are Argo CD's to fetch.
func (d *Document) checkSourcePaths(errs *Errors, at string, s *Source) {
	if k := s.Kustomize; k != nil {
		for j, p := range k.Patches {
			if p.Path != "" {
				d.report(errs, fmt.Sprintf("%s.kustomize.patches[%d].path", at, j), checkPatchPath(p.Path))
			}
		}
	}
	if h := s.Helm; h != nil {
		for j, v := range h.ValueFiles {
			d.report(errs, fmt.Sprintf("%s.helm.valueFiles[%d]", at, j), checkValueFile(s.Path, v))
		}
	}
}

func checkPatchPath(p string) error {
	if err := checkRepoPath(p); err != nil {
		return fmt.Errorf("%q must be a relative path inside the kustomization's folder (Kustomize reads no file outside it)", p)
	}
	return nil
}

func checkValueFile(sourcePath, v string) error {
	if strings.Contains(v, "://") || strings.HasPrefix(v, "$") {
		return nil
	}
	if escapes(sourcePath, v) {
		return fmt.Errorf("%q resolves outside the repository (Argo CD refuses it)", v)
	}
	return nil
}

// escapes reports whether v, relative to dir (both inside the repository,
// an absolute v from the root), climbs above the root.
func escapes(dir, v string) bool {
	if path.IsAbs(v) {
		dir = ""
	}
	depth := 0
	for _, part := range strings.Split(dir+"/"+v, "/") {
		switch part {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}
