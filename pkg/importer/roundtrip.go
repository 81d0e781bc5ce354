package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/importer/appdiff"
	"github.com/deployctl/deployctl/pkg/plan"
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
	sizes := templateSizes{}
	out, err := compileSpec(b.o.File, yml, sizes.visitor(func(a *compile.Application) error {
		if m := b.res.Sources[a.Name]; m != nil {
			byApp[a.Name] = Compare(a.Name, m.View(), a)
		}
		return nil
	}))
	if err != nil {
		return err
	}
	b.tooLarge(out, sizes)
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
	if len(b.res.Differences) > 0 {
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

// tooLarge notes a platform `deployctl generate` would refuse as one
// workflow: a generated WorkflowTemplate over render.MaxObjectBytes. The
// spec is still written: it can be split, or generated per stack.
func (b *builder) tooLarge(out *compile.Output, sizes templateSizes) {
	for _, a := range compile.Actions {
		s := sizes[a]
		if s == nil || !s.done || s.err != nil || s.size <= render.MaxObjectBytes {
			continue
		}
		e := &render.TooLargeError{File: render.DirWorkflowTemplates + "/" + string(a) + ".yaml", Size: s.size, Apps: len(out.Deploy.Apps())}
		b.note("`deployctl generate` will refuse this spec as it is: %v", e)
		return
	}
}

// templateSizes are the rendered sizes of the WorkflowTemplates of a
// streamed compile, by action.
type templateSizes map[dag.Action]*templateSize

// visitor sizes the WorkflowTemplates and hands each Application to app.
// Once one is over render.MaxObjectBytes the rest are not sized: only the
// first is noted (sizing renders every task, most of the check's time).
func (ts templateSizes) visitor(app func(*compile.Application) error) compile.Visitor {
	get := func(a dag.Action) *templateSize {
		for _, s := range ts {
			if s.done && s.size > render.MaxObjectBytes {
				return nil
			}
		}
		if ts[a] == nil {
			ts[a] = &templateSize{}
		}
		return ts[a]
	}
	return compile.Visitor{
		Application: app,
		Task: func(a dag.Action, t *wfv1.DAGTask) error {
			if s := get(a); s != nil {
				s.task(t)
			}
			return nil
		},
		Template: func(a dag.Action, wt *wfv1.WorkflowTemplate) error {
			if s := get(a); s != nil {
				s.template(wt)
			}
			return nil
		},
	}
}

// templateSize is len(render.Object(wt)) of a WorkflowTemplate whose tasks
// come one at a time, exactly, without rendering (or holding) it whole: a
// DAG of 10,000 tasks is tens of MiB of YAML, and many times that on the
// way (JSON, maps, YAML nodes). A block sequence's text is its items'
// texts one after the other, each at the same indentation, so the template
// is rendered with its first task only, and every other task alone at the
// same depth (spec.templates[].dag.tasks[]), its wrapper's bytes
// subtracted. A rendering error is kept (err) and the size left unknown.
type templateSize struct {
	first   *wfv1.DAGTask
	n       int // tasks seen
	wrapper int // the bytes of a one-task wrapper that are not the task's
	size    int // the rest, then (template) the whole
	done    bool
	err     error
}

func (s *templateSize) task(t *wfv1.DAGTask) {
	s.n++
	if s.err != nil {
		return
	}
	switch s.n {
	case 1:
		cp := *t
		s.first = &cp
	case 2:
		// wrapper = [t0] + [t1] - [t0 t1]
		first, err1 := wrappedSize(*s.first)
		second, err2 := wrappedSize(*t)
		both, err3 := wrappedSize(*s.first, *t)
		s.err = errors.Join(err1, err2, err3)
		s.wrapper = first + second - both
		s.size += second - s.wrapper
	default:
		n, err := wrappedSize(*t)
		s.err = err
		s.size += n - s.wrapper
	}
}

// template adds the template itself, with its first task (an empty DAG's
// `tasks: []` renders as null here: never near the limit).
func (s *templateSize) template(wt *wfv1.WorkflowTemplate) {
	if s.err != nil {
		return
	}
	skel := *wt
	skel.Spec.Templates = append([]wfv1.Template(nil), wt.Spec.Templates...)
	main := *skel.Spec.Templates[0].DAG
	main.Tasks = nil
	if s.first != nil {
		main.Tasks = []wfv1.DAGTask{*s.first}
	}
	skel.Spec.Templates[0].DAG = &main
	data, err := render.Object(&skel)
	s.err = err
	s.size += len(data)
	s.first = nil
	s.done = true
}

// wrappedSize renders tasks as the tasks of a DAG template, at the depth
// they have in a WorkflowTemplate.
func wrappedSize(ts ...wfv1.DAGTask) (int, error) {
	data, err := render.Object(map[string]any{"spec": map[string]any{"templates": []any{map[string]any{"dag": map[string]any{"tasks": ts}}}}})
	return len(data), err
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
	dropAnn := append([]string{plan.AnnotationSyncWave, plan.AnnotationSyncWavePath}, droppedAnnotations...)
	return appdiff.Comparable(obj, droppedLabels, dropAnn)
}
