package render

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/plan"
)

// MaxObjectBytes bounds any one generated object. etcd refuses objects over
// 1.5 MiB; Argo Workflows copies the WorkflowTemplate's spec into every
// Workflow and adds a status that grows with the run, so a template must
// stay well below the limit to be runnable.
const MaxObjectBytes = 1024 * 1024

// Folder names of the generated tree (generated/<platform>/…).
const (
	DirClusterTemplates  = "cluster-workflow-templates"
	DirWorkflowTemplates = "workflow-templates"
	DirWorkflows         = "workflows"
	DirApplications      = "applications"
	DirGitOps            = "gitops"
	DirRBAC              = "rbac"
)

// Plans are a compiled platform's deploy and teardown plans, computed once by
// the caller (pkg/generate): the writer layer prints plans, it does not make
// them.
type Plans struct {
	Deploy, Teardown *plan.Plan
}

// Folder is a folder another generator owns (argocd/, events/, bootstrap/),
// already rendered: file name → content. Guide, when set, is that
// generator's Markdown on how to use the folder; the README prints it as is.
type Folder struct {
	Dir   string
	Files map[string][]byte
	Guide string
}

// Platform lays out a compiled platform as files, with its README (from
// plans) and the other generators' folders.
func Platform(out *compile.Output, plans Plans, extra ...Folder) (Tree, error) {
	t := Tree{}
	folder := func(dir string, objs map[string]any, kustomize bool) error {
		var names []string
		// In name order: the first object over the limit is the one
		// named, the same on every run.
		for _, name := range slices.Sorted(maps.Keys(objs)) {
			obj := objs[name]
			data, err := Object(obj)
			if err != nil {
				return err
			}
			if len(data) > MaxObjectBytes {
				return tooLarge(dir+"/"+name, len(data), out)
			}
			if err := t.Add(dir+"/"+name, data); err != nil {
				return err
			}
			names = append(names, name)
		}
		if kustomize {
			return t.Add(dir+"/kustomization.yaml", Kustomization(names))
		}
		return nil
	}

	cwts := map[string]any{}
	for _, c := range out.ClusterTemplates {
		cwts[c.Name+".yaml"] = c
	}
	wts, wfs := map[string]any{}, map[string]any{}
	for _, a := range compile.Actions {
		wts[string(a)+".yaml"] = out.WorkflowTemplates[a]
		wfs[string(a)+".yaml"] = out.Workflows[a]
	}
	// The deploy's Applications, which its tasks read (compile/manifests.go):
	// applied with the WorkflowTemplates.
	for _, c := range out.ApplicationConfigMaps {
		wts[c.Name+".yaml"] = c
	}
	apps := map[string]any{}
	for _, a := range out.Applications {
		apps[a.Name+".yaml"] = a
	}
	rbac := map[string]any{}
	for _, o := range out.RBAC {
		rbac[rbacFile(o)] = o
	}
	steps := []struct {
		dir       string
		objs      map[string]any
		kustomize bool
	}{
		{DirClusterTemplates, cwts, true},
		{DirWorkflowTemplates, wts, true},
		// Workflows use generateName, which `kubectl apply` cannot take:
		// they are for `argo submit`, so no kustomization here.
		{DirWorkflows, wfs, false},
		{DirApplications, apps, true},
		{DirRBAC, rbac, true},
	}
	if out.Root != nil {
		steps = append(steps, struct {
			dir       string
			objs      map[string]any
			kustomize bool
		}{DirGitOps, map[string]any{"root-application.yaml": out.Root}, true})
	}
	for _, s := range steps {
		if err := folder(s.dir, s.objs, s.kustomize); err != nil {
			return nil, err
		}
	}
	var guides []string
	for _, f := range extra {
		if err := t.AddAll(f.Dir, f.Files); err != nil {
			return nil, err
		}
		if f.Guide != "" {
			guides = append(guides, f.Guide)
		}
	}
	readme, err := Readme(out, plans, t.Paths(), guides...)
	if err != nil {
		return nil, err
	}
	if err := t.Add("README.md", readme); err != nil {
		return nil, err
	}
	return t, nil
}

// rbacFile names an RBAC object's file by kind (and name for ConfigMaps,
// which are partial Argo CD configs or the plugin's declaration, and for
// Secrets, the legacy service account tokens of plugin mode); the executor
// plugin's own ServiceAccount, Role and RoleBinding are executor-plugin-KIND.
func rbacFile(o any) string {
	kind := strings.ToLower(o.(runtime.Object).GetObjectKind().GroupVersionKind().Kind)
	name := o.(metav1.Object).GetName()
	switch {
	case kind == "configmap" || kind == "secret":
		return name + ".yaml"
	case name == compile.PluginServiceAccount:
		return "executor-plugin-" + kind + ".yaml"
	}
	return kind + ".yaml"
}

// TooLargeError is a generated object over MaxObjectBytes: the compiler
// refuses rather than write something the cluster would reject.
type TooLargeError struct {
	File string
	Size int
	Apps int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s would be %.2f MiB, over the %.1f MiB a generated object may take (etcd stores at most 1.5 MiB per object, and Argo adds the run's status): "+
		"the scope has %d apps; split the platform into several platform specs with their own workflows, or generate per stack with --scope stack:NAME",
		e.File, float64(e.Size)/(1<<20), float64(MaxObjectBytes)/(1<<20), e.Apps)
}

func tooLarge(file string, size int, out *compile.Output) error {
	return &TooLargeError{File: file, Size: size, Apps: len(out.Deploy.Apps())}
}

// scopeNote says what a scoped tree covers.
func scopeNote(out *compile.Output) string {
	if out.Scope == "platform" {
		return "the whole platform"
	}
	return fmt.Sprintf("scope %s (deploy and validate: %d apps, teardown: %d apps)", out.Scope, len(out.Deploy.Apps()), len(out.Teardown.Apps()))
}
