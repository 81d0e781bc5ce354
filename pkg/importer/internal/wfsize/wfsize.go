// Package wfsize measures a streamed compile's WorkflowTemplates as
// render.Object would write them, exactly, without holding or rendering any
// whole: the import notes a spec `deployctl generate` would refuse as too
// large (render.MaxObjectBytes) without the memory of 10,000 tasks at once.
package wfsize

import (
	"errors"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/render"
)

// Sizes are the rendered sizes of the WorkflowTemplates of a
// streamed compile, by action.
type Sizes map[dag.Action]*Size

// Visitor sizes the WorkflowTemplates and hands each Application to app.
// Once one is over render.MaxObjectBytes the rest are not sized: only the
// first is noted (sizing renders every task, most of the check's time).
func (ts Sizes) Visitor(app func(*compile.Application) error) compile.Visitor {
	size := func(a dag.Action) *Size {
		for _, s := range ts {
			if s.done && s.size > render.MaxObjectBytes {
				return nil
			}
		}
		if ts[a] == nil {
			ts[a] = &Size{}
		}
		return ts[a]
	}
	return compile.Visitor{
		Application: app,
		Task: func(a dag.Action, t *wfv1.DAGTask) error {
			if s := size(a); s != nil {
				s.task(t)
			}
			return nil
		},
		Template: func(a dag.Action, wt *wfv1.WorkflowTemplate) error {
			if s := size(a); s != nil {
				s.template(wt)
			}
			return nil
		},
	}
}

// Size is len(render.Object(wt)) of a WorkflowTemplate whose tasks
// come one at a time, exactly, without rendering (or holding) it whole: a
// DAG of 10,000 tasks is tens of MiB of YAML, and many times that on the
// way (JSON, maps, YAML nodes). A block sequence's text is its items'
// texts one after the other, each at the same indentation, so the template
// is rendered with its first task only, and every other task alone at the
// same depth (spec.templates[].dag.tasks[]), its wrapper's bytes
// subtracted. A rendering error is kept (err) and the size left unknown.
type Size struct {
	first   *wfv1.DAGTask
	n       int // tasks seen
	wrapper int // the bytes of a one-task wrapper that are not the task's
	size    int // the rest, then (template) the whole
	done    bool
	err     error
}

func (s *Size) task(t *wfv1.DAGTask) {
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
func (s *Size) template(wt *wfv1.WorkflowTemplate) {
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

// Known is the template's size, and whether it is known: the template was
// sized whole without a rendering error. A nil Size is not known.
func (s *Size) Known() (int, bool) {
	if s == nil || !s.done || s.err != nil {
		return 0, false
	}
	return s.size, true
}
