// Package importer turns existing Argo CD Applications into a platform
// spec: an app-of-apps rendered by Helm, a `kubectl get applications -A -o
// yaml` dump, or folders of Application manifests. Stacks come from a
// label, an annotation, the parent Application or the folder; dependencies
// are inferred from argocd.argoproj.io/sync-wave, conservatively, and marked
// as inferred so a person can prune them. The result is checked by the
// product's own loader and compiler: every Application the spec generates is
// compared with its original, and whatever the spec cannot express is
// reported, never dropped silently.
package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Manifest is one Application read from the input.
type Manifest struct {
	// File is where it was read, Folder the folder group (see Read).
	File   string
	Folder string
	// Raw is the object as written; App is the same, typed. Raw is what
	// the round trip compares against, so a field the typed struct does
	// not know is still reported.
	Raw map[string]any
	App *appv1.Application
}

// Input is everything read: the Applications and what was skipped.
type Input struct {
	Apps []Manifest
	// Skipped names every other object found ("AppProject default").
	Skipped []string
}

// Read reads files and folders (recursively: *.yaml, *.yml, *.json, hidden
// entries skipped) holding Applications as single objects, multi-document
// YAML or Lists (kind: List or *List, as `kubectl get -o yaml` prints).
// Status and other server-side fields are ignored.
//
// Folder is the first folder below a folder argument
// (apps/foundation/metallb.yaml read from apps → "foundation"); a file
// directly in it, or a file argument, gets the name of its own folder.
func Read(paths []string) (*Input, error) {
	in := &Input{}
	for _, root := range paths {
		fi, err := os.Stat(root)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			if err := in.readFile(root, folderName(filepath.Dir(root))); err != nil {
				return nil, err
			}
			continue
		}
		var files []string
		err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != root && strings.HasPrefix(e.Name(), ".") {
				if e.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !e.IsDir() && isManifest(p) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			rel, _ := filepath.Rel(root, f)
			folder := folderName(root)
			if first, _, ok := strings.Cut(filepath.ToSlash(rel), "/"); ok {
				folder = first
			}
			if err := in.readFile(f, folder); err != nil {
				return nil, err
			}
		}
	}
	return in, nil
}

func isManifest(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func folderName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Base(dir)
	}
	return filepath.Base(abs)
}

func (in *Input) readFile(file, folder string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	return in.Parse(file, folder, data)
}

// Parse adds the Applications of one file's content.
func (in *Input) Parse(file, folder string, data []byte) error {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for doc := 1; ; doc++ {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", file, doc, err)
		}
		if obj == nil {
			continue // an empty document (Helm's "---" between templates)
		}
		if err := in.add(file, folder, obj); err != nil {
			return fmt.Errorf("%s: document %d: %w", file, doc, err)
		}
	}
}

func (in *Input) add(file, folder string, obj map[string]any) error {
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	if items, ok := obj["items"].([]any); ok && strings.HasSuffix(kind, "List") {
		for i, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				return fmt.Errorf("items[%d]: not an object", i)
			}
			if err := in.add(file, folder, m); err != nil {
				return fmt.Errorf("items[%d]: %w", i, err)
			}
		}
		return nil
	}
	group, _, _ := strings.Cut(apiVersion, "/")
	if kind != "Application" || group != "argoproj.io" {
		name := ""
		if md, ok := obj["metadata"].(map[string]any); ok {
			name, _ = md["name"].(string)
		}
		if kind == "" {
			kind = "(no kind)"
		}
		in.Skipped = append(in.Skipped, strings.TrimSpace(kind+" "+name))
		return nil
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var app appv1.Application
	if err := json.Unmarshal(raw, &app); err != nil {
		return fmt.Errorf("not a valid Application: %w", err)
	}
	if app.Name == "" {
		return errors.New("an Application without metadata.name")
	}
	in.Apps = append(in.Apps, Manifest{File: file, Folder: folder, Raw: obj, App: &app})
	return nil
}
