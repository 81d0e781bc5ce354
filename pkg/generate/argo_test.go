package generate

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/workflow/validate"
	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/render"
)

// examples are every spec under examples/ that must compile.
func examples(t testing.TB) []string {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	return files
}

func generateFile(t testing.TB, file, scope string) render.Tree {
	t.Helper()
	d, err := dag.Load(file)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	tree, _, err := Tree(d, scope)
	if err != nil {
		t.Fatalf("%s: generate: %v", file, err)
	}
	return tree
}

// getters resolve templates from the generated tree, as the cluster would.
type wtGetter map[string]*wfv1.WorkflowTemplate

func (g wtGetter) Get(name string) (*wfv1.WorkflowTemplate, error) {
	if wt, ok := g[name]; ok {
		return wt, nil
	}
	return nil, fmt.Errorf("workflowtemplate %q not generated", name)
}

type cwtGetter map[string]*wfv1.ClusterWorkflowTemplate

func (g cwtGetter) Get(name string) (*wfv1.ClusterWorkflowTemplate, error) {
	if c, ok := g[name]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("clusterworkflowtemplate %q not generated", name)
}

// parsed is a generated tree decoded strictly into the projects' own types.
type parsed struct {
	cwts  cwtGetter
	wts   wtGetter
	wfs   map[string]*wfv1.Workflow
	crons map[string]*wfv1.CronWorkflow
	apps  map[string]*appv1.Application
	kinds map[string]string // file → kind
}

func parse(t *testing.T, tree render.Tree) parsed {
	t.Helper()
	p := parsed{cwtGetter{}, wtGetter{}, map[string]*wfv1.Workflow{}, map[string]*wfv1.CronWorkflow{}, map[string]*appv1.Application{}, map[string]string{}}
	for _, path := range tree.Paths() {
		if !strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, "kustomization.yaml") {
			continue
		}
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(tree[path], &meta); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		p.kinds[path] = meta.Kind
		strict := func(into any) {
			if err := yaml.UnmarshalStrict(tree[path], into); err != nil {
				t.Fatalf("%s: strict decode as %s: %v", path, meta.Kind, err)
			}
		}
		switch meta.Kind {
		case "ClusterWorkflowTemplate":
			var c wfv1.ClusterWorkflowTemplate
			strict(&c)
			p.cwts[c.Name] = &c
		case "WorkflowTemplate":
			var wt wfv1.WorkflowTemplate
			strict(&wt)
			p.wts[wt.Name] = &wt
		case "Workflow":
			var wf wfv1.Workflow
			strict(&wf)
			p.wfs[path] = &wf
		case "CronWorkflow":
			var c wfv1.CronWorkflow
			strict(&c)
			p.crons[path] = &c
		case "Application":
			var a appv1.Application
			strict(&a)
			p.apps[a.Name] = &a
		}
	}
	return p
}

// TestArgoValidatorAcceptsEverything runs Argo Workflows' own validator (the
// code behind `argo lint --offline`) on every generated template and
// workflow of every example, resolving templateRefs against the generated
// ClusterWorkflowTemplates.
func TestArgoValidatorAcceptsEverything(t *testing.T) {
	for _, file := range examples(t) {
		scopes := map[string][]string{
			"minimal.yaml":            {"stack:apps", "app:web"},
			"reference-platform.yaml": {"stack:security", "app:keycloak"},
		}[filepath.Base(file)]
		for _, scope := range append([]string{"platform"}, scopes...) {
			t.Run(filepath.Base(file)+"/"+strings.ReplaceAll(scope, ":", "="), func(t *testing.T) {
				p := parse(t, generateFile(t, file, scope))
				if len(p.cwts) != 3 || len(p.wts) != 3 || len(p.wfs) != 3 {
					t.Fatalf("want 3 CWTs, 3 WorkflowTemplates, 3 Workflows; got %d, %d, %d", len(p.cwts), len(p.wts), len(p.wfs))
				}
				argoValidate(t, p)
			})
		}
	}
}

// argoValidate runs Argo's validator on every template and workflow of a
// parsed tree, and on the steady-state validate CronWorkflow (events/)
// against the real generated validate WorkflowTemplate.
func argoValidate(t *testing.T, p parsed) {
	t.Helper()
	lint := validate.ValidateOpts{Lint: true}
	for name, c := range p.cwts {
		if err := validate.ValidateClusterWorkflowTemplate(p.wts, p.cwts, c, nil, lint); err != nil {
			t.Errorf("ClusterWorkflowTemplate %s: %v", name, err)
		}
	}
	for name, wt := range p.wts {
		if err := validate.ValidateWorkflowTemplate(p.wts, p.cwts, wt, nil, lint); err != nil {
			t.Errorf("WorkflowTemplate %s: %v", name, err)
		}
	}
	for path, wf := range p.wfs {
		if err := validate.ValidateWorkflow(p.wts, p.cwts, wf, nil, lint); err != nil {
			t.Errorf("Workflow %s: %v", path, err)
		}
	}
	if len(p.crons) == 0 {
		t.Error("no CronWorkflow generated")
	}
	for path, c := range p.crons {
		if err := validate.ValidateCronWorkflow(context.Background(), p.wts, p.cwts, c, nil); err != nil {
			t.Errorf("CronWorkflow %s: %v", path, err)
		}
	}
}
