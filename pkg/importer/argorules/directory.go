package argorules

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v2/util/glob"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/safeyaml"
)

var argoManifestFile = regexp.MustCompile(`^.*\.(yaml|yml|json|jsonnet)$`)

// NormalizeRepo compares repository URLs the way they name one repository:
// no scheme or user, scp-style host:path as host/path, host in lower case,
// no trailing "/" or ".git".
func NormalizeRepo(u string) string {
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

// IsDirectorySource: Argo CD renders the path as plain manifests (no chart,
// no Helm, Kustomize or plugin settings, no kustomization or Chart.yaml).
func IsDirectorySource(s appv1.ApplicationSource, dir string) bool {
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

// ManifestFiles lists what Argo CD reads from a directory source, relative
// to it, sorted: manifest file names (any name with anyExtension, Argo CD
// 3.6's directory.disableExtensionFilter), subfolders only with recurse,
// then exclude and include globs on the relative path (argo-cd util/glob).
func ManifestFiles(dir string, d appv1.ApplicationSourceDirectory, anyExtension bool) []string {
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
		if !e.Type().IsRegular() || (!anyExtension && !argoManifestFile.MatchString(e.Name())) {
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

// ExcludeGlob adds files to an exclude glob: gobwas/glob alternatives
// "{a.yaml,b.yaml}", special characters escaped.
func ExcludeGlob(existing string, files []string) (string, bool) {
	var alts []string
	if existing != "" {
		// Kept whole as one alternative (gobwas nests them:
		// {{a/,b},c.yaml}); a comma outside braces, unbalanced braces or
		// a pattern that does not compile would change meaning there.
		if _, err := glob.MatchWithError(existing, ""); err != nil || !nestable(existing) {
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

// nestable: balanced braces and no comma outside them (escapes skipped).
func nestable(p string) bool {
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
			if depth < 0 {
				return false
			}
		case ',':
			if depth == 0 {
				return false
			}
		}
	}
	return depth == 0
}

// Object is what the layout reads of a manifest: its kind and its place in
// its parent's sync.
type Object struct {
	APIVersion, Kind string
	Name, Namespace  string
	Lo, Hi           int // see HookWave
	// Counts: it takes part in the waves (not a Skip, SyncFail or
	// PostDelete hook, which run outside them).
	Counts bool
}

// ObjectsIn reads a manifest file's objects (Lists flattened); ok is false
// when it does not parse (Argo CD would apply or reject it, never skip it
// as an Application).
func ObjectsIn(file string) (objs []Object, ok bool) {
	data, err := readlimit.ReadFile(filepath.FromSlash(file), readlimit.Import)
	if err != nil {
		return nil, false
	}
	type meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name        string            `json:"name"`
			Namespace   string            `json:"namespace"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	add := func(m meta) {
		if m.Kind == "" && m.APIVersion == "" {
			return
		}
		lo, hi, counts := HookWave(m.Metadata.Annotations)
		objs = append(objs, Object{APIVersion: m.APIVersion, Kind: m.Kind, Name: m.Metadata.Name, Namespace: m.Metadata.Namespace, Lo: lo, Hi: hi, Counts: counts})
	}
	dec := safeyaml.NewDecoder(data)
	for {
		var obj struct {
			meta
			Items []meta `json:"items"`
		}
		doc, err := dec.Next()
		if errors.Is(err, io.EOF) {
			return objs, true
		}
		if err != nil {
			return objs, false
		}
		if len(doc.Content) == 0 {
			continue
		}
		if err := safeyaml.DecodeJSON(doc.Content[0], &obj); err != nil {
			return objs, false
		}
		if strings.HasSuffix(obj.Kind, "List") && obj.Items != nil {
			for _, it := range obj.Items {
				add(it)
			}
			continue
		}
		add(obj.meta)
	}
}
