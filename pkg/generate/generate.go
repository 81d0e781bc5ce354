// Package generate is the compiler's front door: a platform DAG in, the
// complete generated/<platform>/ tree out (workflows, templates,
// applications, RBAC, Argo CD health, events, bootstrap).
package generate

import (
	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/render"
)

// Tree compiles a platform for a scope and lays out every generated file.
func Tree(d *dag.DAG, scope string) (render.Tree, *compile.Output, error) {
	out, err := compile.Compile(d, scope)
	if err != nil {
		return nil, nil, err
	}
	extra, err := extras(d)
	if err != nil {
		return nil, nil, err
	}
	t, err := render.Platform(out, extra)
	if err != nil {
		return nil, nil, err
	}
	return t, out, nil
}

// extras are the folders other generators own.
func extras(d *dag.DAG) (map[string]map[string][]byte, error) {
	return map[string]map[string][]byte{}, nil
}
