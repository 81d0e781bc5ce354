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
	"github.com/deployctl/deployctl/pkg/plan"
	"github.com/deployctl/deployctl/pkg/render"
)

// Tree compiles a platform for a scope and lays out every generated file:
// compile's objects, the deploy and teardown plans (made here, once, for the
// README), and the folders of the other generators.
func Tree(d *dag.DAG, scope string) (render.Tree, *compile.Output, error) {
	out, err := compile.Compile(d, scope)
	if err != nil {
		return nil, nil, err
	}
	deploy, err := plan.Make(out.Deploy, out.Scope, dag.Deploy)
	if err != nil {
		return nil, nil, err
	}
	teardown, err := plan.Make(out.Teardown, out.Scope, dag.Teardown)
	if err != nil {
		return nil, nil, err
	}
	argocd, err := healthlua.Files(d.Platform)
	if err != nil {
		return nil, nil, fmt.Errorf("argocd: %w", err)
	}
	wiring, err := events.Generate(d.Platform)
	if err != nil {
		return nil, nil, fmt.Errorf("events: %w", err)
	}
	guide, err := events.Guide(d.Platform)
	if err != nil {
		return nil, nil, fmt.Errorf("events: %w", err)
	}
	ansible, err := bootstrap.Generate(d.Platform)
	if err != nil {
		return nil, nil, fmt.Errorf("bootstrap: %w", err)
	}
	t, err := render.Platform(out, render.Plans{Deploy: deploy, Teardown: teardown},
		render.Folder{Dir: "argocd", Files: argocd},
		render.Folder{Dir: "events", Files: wiring, Guide: guide},
		render.Folder{Dir: "bootstrap", Files: ansible},
	)
	if err != nil {
		return nil, nil, err
	}
	return t, out, nil
}
