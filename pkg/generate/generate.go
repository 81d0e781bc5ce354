// Package generate is the compiler's front door: a platform DAG in, the
// complete generated/<platform>/ tree out (workflows, templates,
// applications, RBAC, Argo CD health, events, bootstrap).
package generate

import (
	"fmt"

	"github.com/deployctl/deployctl/pkg/bootstrap"
	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/events"
	"github.com/deployctl/deployctl/pkg/healthlua"
	"github.com/deployctl/deployctl/pkg/render"
	"github.com/deployctl/deployctl/pkg/spec"
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

// extras are the folders other generators own: Argo CD health
// customizations, Argo Events wiring, the Ansible bootstrap.
func extras(d *dag.DAG) (map[string]map[string][]byte, error) {
	out := map[string]map[string][]byte{}
	for dir, gen := range map[string]func(*spec.Platform) (map[string][]byte, error){
		"argocd":    healthlua.Files,
		"events":    events.Generate,
		"bootstrap": bootstrap.Generate,
	} {
		files, err := gen(d.Platform)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		out[dir] = files
	}
	return out, nil
}
