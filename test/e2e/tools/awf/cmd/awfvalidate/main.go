// Command awfvalidate runs Argo Workflows v4's own validator (the code behind
// `argo lint --offline`) on a generated tree, as pkg/generate's tests do with
// v3: every ClusterWorkflowTemplate, WorkflowTemplate, Workflow and
// CronWorkflow, each decoded strictly into v4's types, templateRefs resolved
// against the same tree. Each DIR is one tree (one platform). Prints one line
// per problem, exits 1 on any.
//
//	awfvalidate DIR...
package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v4/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v4/util/logging"
	"github.com/argoproj/argo-workflows/v4/workflow/validate"
	"sigs.k8s.io/yaml"
)

type wtGetter map[string]*wfv1.WorkflowTemplate

func (g wtGetter) Get(_ context.Context, name string) (*wfv1.WorkflowTemplate, error) {
	if wt, ok := g[name]; ok {
		return wt, nil
	}
	return nil, fmt.Errorf("workflowtemplate %q not in the tree", name)
}

type cwtGetter map[string]*wfv1.ClusterWorkflowTemplate

func (g cwtGetter) Get(_ context.Context, name string) (*wfv1.ClusterWorkflowTemplate, error) {
	if c, ok := g[name]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("clusterworkflowtemplate %q not in the tree", name)
}

// doc is one YAML document of a file, with where it came from.
type doc struct {
	where string
	kind  string
	raw   []byte
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: awfvalidate DIR...")
		os.Exit(3)
	}
	var problems []string
	total := 0
	for _, dir := range os.Args[1:] {
		n, p, err := validateTree(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "awfvalidate:", err)
			os.Exit(3)
		}
		total += n
		problems = append(problems, p...)
	}
	sort.Strings(problems)
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
	fmt.Printf("awfvalidate: %d objects in %d trees pass Argo Workflows v4's validator\n", total, len(os.Args)-1)
}

// validateTree validates the Argo Workflows objects of one generated tree:
// how many, and the problems found.
func validateTree(dir string) (int, []string, error) {
	var docs []doc
	var problems []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, part := range bytes.Split(b, []byte("\n---\n")) {
			if !bytes.Contains(part, []byte("apiVersion: argoproj.io/")) {
				continue // not an Argo object (Kustomizations, Ansible, ...)
			}
			var meta struct {
				Kind string `json:"kind"`
			}
			if err := yaml.Unmarshal(part, &meta); err != nil {
				problems = append(problems, fmt.Sprintf("%s: document %d: %v", path, i+1, err))
				continue
			}
			docs = append(docs, doc{fmt.Sprintf("%s (document %d)", path, i+1), meta.Kind, part})
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}

	wts, cwts := wtGetter{}, cwtGetter{}
	var wfs []*wfv1.Workflow
	var crons []*wfv1.CronWorkflow
	where := map[any]string{}
	strict := func(d doc, into any) bool {
		if err := yaml.UnmarshalStrict(d.raw, into); err != nil {
			problems = append(problems, fmt.Sprintf("%s: strict decode as %s: %v", d.where, d.kind, err))
			return false
		}
		where[into] = d.where
		return true
	}
	for _, d := range docs {
		switch d.kind {
		case "ClusterWorkflowTemplate":
			c := &wfv1.ClusterWorkflowTemplate{}
			if strict(d, c) {
				cwts[c.Name] = c
			}
		case "WorkflowTemplate":
			wt := &wfv1.WorkflowTemplate{}
			if strict(d, wt) {
				wts[wt.Name] = wt
			}
		case "Workflow":
			wf := &wfv1.Workflow{}
			if strict(d, wf) {
				wfs = append(wfs, wf)
			}
		case "CronWorkflow":
			c := &wfv1.CronWorkflow{}
			if strict(d, c) {
				crons = append(crons, c)
			}
		}
	}

	ctx := logging.InitLoggerInContext() // v4's validator requires a logger in its context
	lint := validate.ValidateOpts{Lint: true}
	n := 0
	for _, c := range cwts {
		n++
		if err := validate.ValidateClusterWorkflowTemplate(ctx, wts, cwts, c, nil, lint); err != nil {
			problems = append(problems, fmt.Sprintf("%s: ClusterWorkflowTemplate %s: %v", where[c], c.Name, err))
		}
	}
	for _, wt := range wts {
		n++
		if err := validate.ValidateWorkflowTemplate(ctx, wts, cwts, wt, nil, lint); err != nil {
			problems = append(problems, fmt.Sprintf("%s: WorkflowTemplate %s: %v", where[wt], wt.Name, err))
		}
	}
	for _, wf := range wfs {
		n++
		if err := validate.ValidateWorkflow(ctx, wts, cwts, wf, nil, lint); err != nil {
			problems = append(problems, fmt.Sprintf("%s: Workflow: %v", where[wf], err))
		}
	}
	for _, c := range crons {
		n++
		if err := validate.ValidateCronWorkflow(ctx, wts, cwts, c, nil); err != nil {
			problems = append(problems, fmt.Sprintf("%s: CronWorkflow %s: %v", where[c], c.Name, err))
		}
	}
	if n == 0 {
		problems = append(problems, dir+": no Argo Workflows object found")
	}
	return n, problems, nil
}
