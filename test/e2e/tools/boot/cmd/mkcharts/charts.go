package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/repo"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// Sources are the Go module directories (GOMODCACHE/<module>@<version>) the
// charts are built from; an empty one is skipped.
type Sources struct {
	ArgoCD, ArgoWorkflows, ArgoEvents, SealedSecrets string
}

// Options of a build.
type Options struct {
	Registry string // image registry of the local images, e.g. local.test
	// Broken names charts of which a second version <v>-broken is built too,
	// whose images carry a tag that no image has (an install that never
	// becomes Ready: the rollback test).
	Broken []string
	// NATSImage is the JetStream server image of Argo Events' EventBus;
	// StandIn the image of its config reloader and metrics exporter, which
	// are not built here (a process that waits for SIGTERM).
	NATSImage, StandIn string
	// JetStreamVersion is the EventBus version the Argo Events chart lists.
	JetStreamVersion string
}

// Chart is one built chart.
type Chart struct {
	Name, Version, AppVersion string
	Files                     map[string][]byte // chart files, relative to the chart folder
}

// moduleVersion is the version of a module directory named <path>@<version>.
func moduleVersion(dir string) (string, error) {
	_, v, ok := strings.Cut(filepath.Base(dir), "@")
	if !ok || !strings.HasPrefix(v, "v") {
		return "", fmt.Errorf("%s: not a module directory <module>@<version>", dir)
	}
	return v, nil
}

// object is one Kubernetes manifest.
type object = map[string]any

// readObjects reads the multi-document YAML files (or kustomize folders) of a
// module directory, in order.
func readObjects(dir string, paths ...string) ([]object, error) {
	var out []object
	for _, p := range paths {
		full := filepath.Join(dir, p)
		var docs []byte
		if st, err := os.Stat(full); err != nil {
			return nil, err
		} else if st.IsDir() {
			m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), full)
			if err != nil {
				return nil, fmt.Errorf("kustomize %s: %w", full, err)
			}
			if docs, err = m.AsYaml(); err != nil {
				return nil, err
			}
		} else if docs, err = os.ReadFile(full); err != nil {
			return nil, err
		}
		for i, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(docs), -1) {
			var o object
			if err := yaml.Unmarshal([]byte(d), &o); err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", full, i+1, err)
			}
			if len(o) > 0 {
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// image is one upstream image the chart replaces by a local one, through
// the values <Key>.repository and <Key>.tag (the upstream chart's names).
type image struct {
	Upstream string // repository without tag, e.g. quay.io/argoproj/argocd
	Key      string // values path of {repository, tag}, e.g. global.image
	Local    string // local repository, without registry, e.g. argocd
}

// spec says how one component's release manifests become a chart.
type spec struct {
	Name, Description string
	Paths             []string // release manifests in the module
	Images            []image
	Drop              func(kind, name string) bool
	// Rename gives an object a release-prefixed name (upstream chart's
	// naming): "<kind>/<name>" -> suffix after "{{ .Release.Name }}-".
	Rename map[string]string
	// Blocks are maps or lists a value replaces: object "<kind>/<name>",
	// a path of keys in it, the values path; the default is what the
	// release manifests have there.
	Blocks []block
	// Edit changes an object after the generic rewrite (may be nil).
	Edit func(key string, o object, ph *placeholders, opts Options) error
	// Extra template files.
	Extra map[string]string
}

type block struct {
	Object string   // kind/name
	Path   []string // keys in the object; a key "@yaml:K" parses the string under K as YAML
	Values string   // values path, e.g. configs.cm
}

// placeholders are tokens in marshalled YAML later replaced by template text.
type placeholders struct {
	n      int
	inline map[string]string // token -> template text in place of the token
	blocks map[string]string // token -> values path rendered as a YAML block
}

func (p *placeholders) token() string {
	p.n++
	return fmt.Sprintf("DCTLPH%04dX", p.n)
}

func (p *placeholders) Inline(tmpl string) string {
	t := p.token()
	p.inline[t] = tmpl
	return t
}

func (p *placeholders) Block(valuesPath string) string {
	t := p.token()
	p.blocks[t] = valuesPath
	return t
}

var escaper = strings.NewReplacer("{{", `{{ "{{" }}`, "}}", `{{ "}}" }}`)

// render marshals an object into template text.
func (p *placeholders) render(o object) (string, error) {
	b, err := yaml.Marshal(o)
	if err != nil {
		return "", err
	}
	s := escaper.Replace(string(b))
	lines := strings.Split(s, "\n")
	blockRe := regexp.MustCompile(`^(\s*)(- )?([^:]+): (DCTLPH[0-9]{4}X)$`)
	for i, l := range lines {
		if m := blockRe.FindStringSubmatch(l); m != nil {
			if vp, ok := p.blocks[m[4]]; ok {
				indent := len(m[1]) + len(m[2]) + 2
				// "key:" then the value as YAML under it, or "key: {}" when it is empty.
				lines[i] = fmt.Sprintf("%s%s%s:{{- with .Values.%s }}\n{{ toYaml . | indent %d }}\n{{- else }} {}\n{{- end }}",
					m[1], m[2], m[3], vp, indent)
				continue
			}
		}
	}
	s = strings.Join(lines, "\n")
	for t, tmpl := range p.inline {
		s = strings.ReplaceAll(s, t, tmpl)
	}
	if m := regexp.MustCompile(`DCTLPH[0-9]{4}X`).FindString(s); m != "" {
		return "", fmt.Errorf("placeholder %s left in %v", m, o["metadata"])
	}
	return s, nil
}

func str(o object, keys ...string) string {
	var cur any = o
	for _, k := range keys {
		m, _ := cur.(map[string]any)
		cur = m[k]
	}
	s, _ := cur.(string)
	return s
}

func mapAt(o object, keys ...string) map[string]any {
	cur := o
	for _, k := range keys {
		next, _ := cur[k].(map[string]any)
		if next == nil {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	return cur
}

var clusterScoped = map[string]bool{
	"CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true, "Namespace": true,
	"PriorityClass": true, "StorageClass": true, "ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true,
}

var podSpecKinds = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true, "Job": true}

// build turns release manifests into a chart.
func build(s spec, dir string, opts Options, broken bool) (*Chart, error) {
	v, err := moduleVersion(dir)
	if err != nil {
		return nil, err
	}
	objs, err := readObjects(dir, s.Paths...)
	if err != nil {
		return nil, err
	}
	version := strings.TrimPrefix(v, "v")
	tag := v
	if broken {
		version += "-broken"
		tag += "-broken"
	}
	values := map[string]any{}
	setPath := func(p string, val any) {
		keys := strings.Split(p, ".")
		mapAt(values, keys[:len(keys)-1]...)[keys[len(keys)-1]] = val
	}
	byUpstream := map[string]image{}
	for _, im := range s.Images {
		setPath(im.Key+".repository", opts.Registry+"/"+im.Local)
		setPath(im.Key+".tag", tag)
		byUpstream[im.Upstream] = im
	}
	setPath("global.imagePullPolicy", "IfNotPresent")
	ph := &placeholders{inline: map[string]string{}, blocks: map[string]string{}}
	imageRef := func(ref string) (string, bool) {
		repoPart := ref
		if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
			repoPart = ref[:i]
		}
		im, ok := byUpstream[repoPart]
		if !ok {
			return "", false
		}
		return ph.Inline(fmt.Sprintf(`"{{ .Values.%s.repository }}:{{ .Values.%s.tag }}"`, im.Key, im.Key)), true
	}
	releaseLabels := func(m map[string]any) {
		m["app.kubernetes.io/instance"] = ph.Inline("{{ .Release.Name }}")
	}

	var docs []string
	used := map[string]bool{}
	for _, o := range objs {
		kind, name := str(o, "kind"), str(o, "metadata", "name")
		if s.Drop != nil && s.Drop(kind, name) {
			continue
		}
		key := kind + "/" + name
		md := mapAt(o, "metadata")
		if suffix, ok := s.Rename[key]; ok {
			md["name"] = ph.Inline("{{ .Release.Name }}-" + suffix)
			used["rename:"+key] = true
		}
		if !clusterScoped[kind] {
			if _, ok := md["namespace"]; ok {
				md["namespace"] = ph.Inline("{{ .Release.Namespace }}")
			}
		}
		releaseLabels(mapAt(o, "metadata", "labels"))
		if subj, ok := o["subjects"].([]any); ok {
			for _, x := range subj {
				if m, ok := x.(map[string]any); ok && m["kind"] == "ServiceAccount" {
					m["namespace"] = ph.Inline("{{ .Release.Namespace }}")
				}
			}
		}
		if podSpecKinds[kind] {
			releaseLabels(mapAt(o, "spec", "template", "metadata", "labels"))
			pod := mapAt(o, "spec", "template", "spec")
			for _, list := range []string{"initContainers", "containers"} {
				cs, _ := pod[list].([]any)
				for _, c := range cs {
					cm, _ := c.(map[string]any)
					if cm == nil {
						continue
					}
					if img, _ := cm["image"].(string); img != "" {
						t, ok := imageRef(img)
						if !ok {
							return nil, fmt.Errorf("%s %s: container %v: image %s has no local replacement", s.Name, key, cm["name"], img)
						}
						cm["image"] = t
						cm["imagePullPolicy"] = ph.Inline("{{ .Values.global.imagePullPolicy }}")
					}
					// Images passed as flags (the executor image of the workflow controller).
					if args, ok := cm["args"].([]any); ok {
						for i, a := range args {
							as, _ := a.(string)
							if t, ok := imageRef(as); ok && strings.Contains(as, "/") {
								args[i] = t
							}
						}
					}
				}
			}
		}
		if s.Edit != nil {
			if err := s.Edit(key, o, ph, opts); err != nil {
				return nil, fmt.Errorf("%s %s: %w", s.Name, key, err)
			}
		}
		for _, b := range s.Blocks {
			if b.Object != key {
				continue
			}
			if err := applyBlock(o, b, ph, setPath); err != nil {
				return nil, fmt.Errorf("%s %s: %w", s.Name, key, err)
			}
			used["block:"+b.Object+":"+b.Values] = true
		}
		doc, err := ph.render(o)
		if err != nil {
			return nil, err
		}
		docs = append(docs, "---\n"+doc)
	}
	for k := range s.Rename {
		if !used["rename:"+k] {
			return nil, fmt.Errorf("%s: the release manifests have no %s to rename", s.Name, k)
		}
	}
	for _, b := range s.Blocks {
		if !used["block:"+b.Object+":"+b.Values] {
			return nil, fmt.Errorf("%s: the release manifests have no %s for %s", s.Name, b.Object, b.Values)
		}
	}
	c := &Chart{Name: s.Name, Version: version, AppVersion: v, Files: map[string][]byte{}}
	meta, err := yaml.Marshal(chart.Metadata{
		APIVersion: "v2", Name: s.Name, Version: version, AppVersion: v, Type: "application",
		Description: s.Description + " Built by deployctl's e2e harness (test/e2e/tools/boot/cmd/mkcharts) from the release manifests of " +
			filepath.Base(dir) + "; not the upstream chart.",
	})
	if err != nil {
		return nil, err
	}
	c.Files["Chart.yaml"] = meta
	vb, err := yaml.Marshal(values)
	if err != nil {
		return nil, err
	}
	c.Files["values.yaml"] = vb
	c.Files["values.schema.json"] = schema(values)
	c.Files["templates/manifests.yaml"] = []byte(strings.Join(docs, ""))
	for n, t := range s.Extra {
		c.Files["templates/"+n] = []byte(t)
	}
	return c, nil
}

// applyBlock replaces the map or list at b.Path of o by the value b.Values,
// whose default becomes what is there now.
func applyBlock(o object, b block, ph *placeholders, setPath func(string, any)) error {
	cur := o
	for i, k := range b.Path {
		last := i == len(b.Path)-1
		if inner, ok := strings.CutPrefix(k, "@yaml:"); ok {
			// A string holding YAML (a config file in a ConfigMap): parse,
			// recurse, store the rendered text back.
			sv, _ := cur[inner].(string)
			var sub object
			if err := yaml.Unmarshal([]byte(sv), &sub); err != nil {
				return fmt.Errorf("%s: %w", inner, err)
			}
			if err := applyBlock(sub, block{Object: b.Object, Path: b.Path[i+1:], Values: b.Values}, ph, setPath); err != nil {
				return err
			}
			out, err := yaml.Marshal(sub)
			if err != nil {
				return err
			}
			cur[inner] = string(out)
			return nil
		}
		if last {
			def := cur[k]
			if def == nil {
				def = map[string]any{}
			}
			setPath(b.Values, def)
			cur[k] = ph.Block(b.Values)
			return nil
		}
		next, ok := cur[k].(map[string]any)
		if !ok {
			if cur[k] != nil {
				return fmt.Errorf("%s is not a map", strings.Join(b.Path[:i+1], "."))
			}
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	return nil
}

// schema refuses values the chart does not honour: every key of the default
// values is allowed (recursively, as far as the defaults are maps), nothing
// else at those levels; below a default that is an empty map or a leaf, any.
func schema(values map[string]any) []byte {
	var walk func(m map[string]any) map[string]any
	walk = func(m map[string]any) map[string]any {
		props := map[string]any{}
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 && !freeForm[k] {
				props[k] = walk(sub)
			} else {
				props[k] = map[string]any{}
			}
		}
		return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	}
	s := walk(values)
	s["$schema"] = "http://json-schema.org/draft-07/schema#"
	b, _ := yaml.YAMLToJSON(mustYAML(s))
	return append(b, '\n')
}

// freeForm are value maps whose keys are data (ConfigMap keys), not settings.
var freeForm = map[string]bool{"cm": true, "rbac": true, "params": true}

func mustYAML(v any) []byte {
	b, err := yaml.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// fromModuleChart packages a chart shipped inside a module (sealed-secrets
// ships its own), with only the image defaults pointed at the local image.
func fromModuleChart(dir, chartDir string, opts Options, broken bool, im image) (*Chart, error) {
	v, err := moduleVersion(dir)
	if err != nil {
		return nil, err
	}
	root := filepath.Join(dir, chartDir)
	ch, err := loader.LoadDir(root)
	if err != nil {
		return nil, err
	}
	c := &Chart{Name: ch.Metadata.Name, Version: ch.Metadata.Version, AppVersion: ch.Metadata.AppVersion, Files: map[string][]byte{}}
	tag := v
	if broken {
		c.Version += "-broken"
		tag += "-broken"
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		c.Files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Image defaults: upstream's values file, with the image keys replaced in
	// place (comments and order kept).
	vals := string(c.Files["values.yaml"])
	reg, repoName, _ := strings.Cut(opts.Registry+"/"+im.Local, "/")
	repl := map[string]string{"registry": reg, "repository": repoName, "tag": tag}
	re := regexp.MustCompile(`(?m)^(image:\n(?:[ \t]+.*\n|\s*\n)*?)`)
	if !re.MatchString(vals) {
		return nil, fmt.Errorf("%s: values.yaml has no top-level image", root)
	}
	lines := strings.Split(vals, "\n")
	in := false
	for i, l := range lines {
		if l == "image:" {
			in = true
			continue
		}
		if in && l != "" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "#") {
			in = false
		}
		if in {
			for k, nv := range repl {
				if strings.HasPrefix(l, "  "+k+": ") {
					lines[i] = "  " + k + ": " + nv
				}
			}
		}
	}
	c.Files["values.yaml"] = []byte(strings.Join(lines, "\n"))
	meta := *ch.Metadata
	meta.Version = c.Version
	meta.Description += " Packaged by deployctl's e2e harness from " + filepath.Base(dir) + " (the module's own chart), images pointed at local ones."
	mb, err := yaml.Marshal(meta)
	if err != nil {
		return nil, err
	}
	c.Files["Chart.yaml"] = mb
	return c, nil
}

// Package writes the chart archive <name>-<version>.tgz into dir,
// deterministically (sorted files, fixed times), and returns its path.
func (c *Chart) Package(dir string) (string, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(c.Files))
	for n := range c.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b := c.Files[n]
		h := &tar.Header{Name: path.Join(c.Name, n), Mode: 0o644, Size: int64(len(b)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(h); err != nil {
			return "", err
		}
		if _, err := tw.Write(b); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	if err := gz.Close(); err != nil {
		return "", err
	}
	out := filepath.Join(dir, c.Name+"-"+c.Version+".tgz")
	return out, os.WriteFile(out, buf.Bytes(), 0o644)
}

// WriteIndex writes dir/index.yaml for the archives, with URLs relative to
// baseURL and fixed timestamps.
func WriteIndex(dir, baseURL string, charts []*Chart, archives []string) error {
	idx := repo.NewIndexFile()
	for i, c := range charts {
		b, err := os.ReadFile(archives[i])
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ch, err := loader.LoadArchive(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("%s: %w", archives[i], err)
		}
		if err := idx.MustAdd(ch.Metadata, filepath.Base(archives[i]), baseURL, hex.EncodeToString(sum[:])); err != nil {
			return err
		}
		_ = c
	}
	idx.SortEntries()
	idx.Generated = time.Unix(0, 0).UTC()
	for _, vs := range idx.Entries {
		for _, v := range vs {
			v.Created = time.Unix(0, 0).UTC()
		}
	}
	return idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o644)
}

func yamlUnmarshal(s string, v any) error { return yaml.Unmarshal([]byte(s), v) }

func yamlMarshal(v any) (string, error) {
	b, err := yaml.Marshal(v)
	return string(b), err
}
