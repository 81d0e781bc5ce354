package appread

import (
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
)

// Kustomize folders with helmCharts: Argo CD renders them with Helm
// (--enable-helm); the import runs no helm. Most such folders are what an
// Application deploys (a workload's chart), not Applications, so "build it
// with --enable-helm and import the output" would import nothing: the
// advice depends on where the folder sits.

// helmFolder is one kustomization with helmCharts, and the chain of
// kustomizations that reached it (itself last).
type helmFolder struct {
	file   string
	charts []string
	chain  []string
}

func chartNames(k *types.Kustomization) []string {
	var out []string
	for _, c := range k.HelmCharts {
		n := c.Name
		if c.Repo != "" {
			n += " from " + c.Repo
		}
		out = append(out, n)
	}
	for _, c := range k.HelmChartInflationGenerator { //nolint:staticcheck // still read by Kustomize
		out = append(out, c.ChartName)
	}
	return out
}

// reachedVia names the kustomizations that led to the last of chain, for
// a problem found there: " (reached from a → b → c)"; "" for a root.
func reachedVia(chain []string) string {
	if len(chain) < 2 {
		return ""
	}
	return " (reached from " + strings.Join(chain, " → ") + ")"
}

// helmFolders decides each helmCharts folder: a base of another build
// refuses that build (which may hold Applications); a folder of its own
// that an Application read so far deploys is left out, with a note; any
// other is refused with both ways out.
func (in *Input) helmFolders(helm map[string]*helmFolder, used map[string]bool) {
	for _, dir := range slices.Sorted(maps.Keys(helm)) {
		h := helm[dir]
		charts := strings.Join(h.charts, ", ")
		switch app := in.deployedBy(dir); {
		case used[dir] || len(h.chain) > 1:
			root := h.chain[0]
			in.problem("%s: helmCharts (%s): Kustomize renders a Helm chart here and the import runs no helm%s; "+
				"render the build that uses it first: kustomize build --enable-helm %s | deployctl import -", h.file, charts, reachedVia(h.chain), root)
		case app != "":
			in.NotObjects = append(in.NotObjects, fmt.Sprintf("%s: helmCharts (%s): what Application %s deploys (Argo CD renders it with Helm), "+
				"not Applications, left out", dir, charts, app))
		default:
			in.problem("%s: helmCharts (%s): the import runs no helm. If an Application deploys this folder, it holds that app's resources, "+
				"not Applications: leave it out of the paths you import (give the folders of Applications); "+
				"if the chart renders Applications, render it first: kustomize build --enable-helm %s | deployctl import -", h.file, charts, dir)
		}
	}
}

// deployedBy is an Application read so far whose source path names dir
// (the path's end is dir's), or "".
func (in *Input) deployedBy(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	abs = filepath.ToSlash(abs)
	for _, m := range in.Apps {
		srcs := m.App.Spec.Sources
		if m.App.Spec.Source != nil {
			srcs = append(srcs, *m.App.Spec.Source)
		}
		for _, s := range srcs {
			p := path.Clean("/" + s.Path)
			if s.Chart == "" && s.Path != "" && p != "/" && strings.HasSuffix(abs, p) {
				return m.App.Namespace + "/" + m.App.Name
			}
		}
	}
	return ""
}
