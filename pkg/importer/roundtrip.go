package importer

import (
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/importer/appdiff"
	"github.com/deployctl/deployctl/pkg/importer/argorules/syncwave"
	"github.com/deployctl/deployctl/pkg/importer/internal/wfsize"
	"github.com/deployctl/deployctl/pkg/render"
	"github.com/deployctl/deployctl/pkg/spec"
)

// check loads the spec with the product's loader (so a bug here can never
// write an invalid file), compiles it, and compares every generated
// Application with its original. The differences are written into the file
// above each app, for the person reading it. The compile is streamed
// (compile.Stream): each Application is compared, and each workflow task
// sized, as it is made, then dropped; the compiled platform is never held
// whole (issue 11: at 10,000 apps it was half the import's memory).
func (b *builder) check() error {
	yml, err := b.render(nil)
	if err != nil {
		return err
	}
	byApp := map[string][]appdiff.Difference{}
	sizes := wfsize.Sizes{}
	var gen []made
	v := sizes.Visitor(func(a *compile.Application) error {
		if m := b.res.Sources[a.Name]; m != nil {
			byApp[a.Name] = Compare(a.Name, m.View(), a)
		}
		gen = append(gen, b.madeOf(a))
		return nil
	})
	// The deploy's Applications are in ConfigMaps beside the templates
	// (compile/manifests.go): one Application too large for one is too.
	var bigCM *render.TooLargeError
	v.ConfigMap = func(c *corev1.ConfigMap) error {
		if bigCM != nil {
			return nil
		}
		data, err := render.Object(c)
		if err == nil && len(data) > render.MaxObjectBytes {
			bigCM = &render.TooLargeError{File: render.DirWorkflowTemplates + "/" + c.Name + ".yaml", Size: len(data)}
		}
		return err
	}
	out, err := compileSpec(b.o.File, yml, v)
	if err != nil {
		if located := b.inputErrors(err); located != nil {
			return located
		}
		return err
	}
	if err := b.oneManager(gen); err != nil {
		return err
	}
	noted := b.tooLarge(out, sizes, bigCM)
	for name := range b.res.Sources {
		diffs, made := byApp[name]
		if !made { // no Application generated for it at all
			diffs = Compare(name, nil, nil)
			byApp[name] = diffs
		}
		b.res.Differences = append(b.res.Differences, diffs...)
	}
	sort.Slice(b.res.Differences, func(i, j int) bool {
		x, y := b.res.Differences[i], b.res.Differences[j]
		if x.App != y.App {
			return x.App < y.App
		}
		return x.Field < y.Field
	})
	if len(b.res.Differences) > 0 || noted { // the header says them
		if yml, err = b.render(byApp); err != nil {
			return err
		}
		if _, err := compileSpec(b.o.File, yml, compile.Visitor{}); err != nil {
			return err
		}
	}
	b.res.YAML = yml
	return nil
}

// tooLarge notes (true) a platform `deployctl generate` would refuse as
// one workflow: a generated WorkflowTemplate, or ConfigMap of the deploy's
// Applications (bigCM), over render.MaxObjectBytes.
// The note goes into the spec's header with the others, and the spec is
// still written, exit 0: it is the whole translation, checked, and what
// fixes it is an edit of it (split the platform, generate per stack, move
// values to a file), which needs the spec; `lint` says the same.
func (b *builder) tooLarge(out *compile.Output, sizes wfsize.Sizes, bigCM *render.TooLargeError) bool {
	if bigCM != nil {
		bigCM.Apps = len(out.Deploy.Apps())
		b.note("`deployctl generate` will refuse this spec as it is: %v", bigCM)
		return true
	}
	for _, a := range compile.Actions {
		size, known := sizes[a].Known()
		if !known || size <= render.MaxObjectBytes {
			continue
		}
		e := &render.TooLargeError{File: render.DirWorkflowTemplates + "/" + string(a) + ".yaml", Size: size, Apps: len(out.Deploy.Apps())}
		b.note("`deployctl generate` will refuse this spec as it is: %v", e)
		return true
	}
	return false
}

// compileSpec runs the spec through everything `deployctl generate` runs
// before writing: the loader (schema and rules), the DAG, the compiler
// (streamed to v). The Output is compile.Stream's: all but the objects
// streamed.
func compileSpec(file string, yml []byte, v compile.Visitor) (*compile.Output, error) {
	if file == "" {
		file = "imported.yaml"
	}
	doc, err := spec.Load(file, yml)
	if err != nil {
		return nil, fmt.Errorf("internal: the imported spec does not load (a bug in the importer; nothing was written):\n%w", err)
	}
	d, err := dag.Build(doc)
	if err != nil {
		return nil, fmt.Errorf("internal: the imported spec has a cycle (a bug in the importer; nothing was written):\n%w", err)
	}
	out, err := compile.Stream(d, "platform", v)
	if err != nil {
		return nil, fmt.Errorf("the imported spec does not compile (nothing was written): %w", err)
	}
	return out, nil
}

// Compare lists the fields in which a generated Application differs from
// the original, among those that matter: the whole spec (source or
// sources, destination, project, syncPolicy, ignoreDifferences, and any
// other), name, namespace, labels and annotations. Not compared: status and
// server-side metadata; the finalizers (deployctl's own); and the metadata
// the import changes on purpose (its notes say so): the parent's tracking
// label and annotation, the labels deployctl sets, Helm's release
// annotations, and the sync wave, moved to deployctl.dev/sync-wave.
func Compare(app string, original map[string]any, generated *compile.Application) []appdiff.Difference {
	if generated == nil {
		return []appdiff.Difference{{App: app, Field: "(the whole Application)", Original: "present"}}
	}
	var gen map[string]any
	raw, _ := json.Marshal(generated)
	_ = json.Unmarshal(raw, &gen)
	var out []appdiff.Difference
	appdiff.Diff(app, "", view(original), view(gen), &out)
	return out
}

// view is the part of an Application that Compare compares, normalized:
// JSON types, and no empty values (absent, "", false, {}, [] all mean
// "not set" to Argo CD).
func view(obj map[string]any) any {
	dropAnn := append([]string{syncwave.Annotation, syncwave.PathAnnotation}, droppedAnnotations...)
	return appdiff.Comparable(obj, droppedLabels, dropAnn)
}
