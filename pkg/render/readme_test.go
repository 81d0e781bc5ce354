package render

import (
	"os"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/executor"
	"github.com/deployctl/deployctl/pkg/healthlua"
	"github.com/deployctl/deployctl/pkg/plan"
	"github.com/deployctl/deployctl/pkg/spec"
)

func readmeOf(t *testing.T, file string) ([]byte, *compile.Output) {
	t.Helper()
	return readmeWith(t, file, nil)
}

// readmeWith is readmeOf of the spec changed by edit.
func readmeWith(t *testing.T, file string, edit func(*spec.Platform)) ([]byte, *compile.Output) {
	t.Helper()
	out, plans := compiled(t, file, edit)
	md, err := Readme(out, plans, []string{"rbac/argocd-cm.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	return md, out
}

// compiled is the spec in file, changed by edit, compiled with its plans.
func compiled(t *testing.T, file string, edit func(*spec.Platform)) (*compile.Output, Plans) {
	t.Helper()
	d, err := dag.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(d.Platform)
	}
	out, err := compile.Compile(d, "platform")
	if err != nil {
		t.Fatal(err)
	}
	deploy, err := plan.Make(out.Deploy, out.Scope, dag.Deploy)
	if err != nil {
		t.Fatal(err)
	}
	teardown, err := plan.Make(out.Teardown, out.Scope, dag.Teardown)
	if err != nil {
		t.Fatal(err)
	}
	return out, Plans{Deploy: deploy, Teardown: teardown}
}

// The README's command blocks are the ones the e2e scenario runs: each is
// there, marked, and applies with the executor's field managers, so the
// manual path and `deployctl deploy` do not rewrite each other's objects.
func TestReadmeRunIt(t *testing.T) {
	md, out := readmeOf(t, "../../examples/reference-platform.yaml")
	blocks, err := E2EBlocks(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"apply", "deploy", "status", "validate", "teardown"} {
		if strings.TrimSpace(blocks[name]) == "" {
			t.Errorf("no e2e block %q", name)
		}
	}
	apply := strings.Split(strings.TrimSpace(blocks["apply"]), "\n")
	want := []string{
		"kubectl apply --server-side --force-conflicts --field-manager=" + executor.PlatformFieldManager(out.Platform) + " -k rbac/",
		"kubectl apply --server-side --force-conflicts --field-manager=" + executor.FieldManager + " -k cluster-workflow-templates/",
		"kubectl apply --server-side --force-conflicts --field-manager=" + executor.FieldManager + " -k workflow-templates/",
	}
	if strings.Join(apply, "\n") != strings.Join(want, "\n") {
		t.Errorf("apply block:\n%s\nwant:\n%s", strings.Join(apply, "\n"), strings.Join(want, "\n"))
	}
	ns := out.WorkflowTemplates[dag.Deploy].Namespace
	if got := blocks["teardown"]; !strings.Contains(got, "-p confirm="+out.Platform) || !strings.Contains(got, "argo submit -n "+ns+" --wait workflows/teardown.yaml") {
		t.Errorf("teardown block %q", got)
	}
	for _, name := range []string{"deploy", "validate", "teardown"} {
		if !strings.Contains(blocks[name], "--wait") {
			t.Errorf("%s block without --wait: its exit status would not say how the run ended", name)
		}
	}
	text := string(md)
	hc, err := healthlua.Customizations(out.Deploy.Platform)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range hc {
		if !strings.Contains(text, "`"+c.Key+"`") {
			t.Errorf("README does not name the health customization %s", c.Key)
		}
	}
	for _, bad := range []string{"make generate", "deployctl deploy   # resume", "--watch"} {
		if strings.Contains(text, bad) {
			t.Errorf("README still says %q", bad)
		}
	}
	for _, s := range []string{"deployctl-argocd-token", "`token`", "spec.argocd.tokenSecret", QuickstartURL, "deployctl explain APP"} {
		if !strings.Contains(text, s) {
			t.Errorf("README lacks %q", s)
		}
	}
}

func TestE2EBlocks(t *testing.T) {
	md := "text\n" + E2EMarker("a") + "\n```sh\nx\ny\n```\n\n```sh\nnot marked\n```\n" + E2EMarker("b") + "\n```\nz\n```\n"
	got, err := E2EBlocks([]byte(md))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["a"] != "x\ny\n" || got["b"] != "z\n" {
		t.Errorf("blocks %q", got)
	}
	for _, bad := range []string{
		E2EMarker("a") + "\ntext\n```sh\nx\n```\n",
		E2EMarker("a") + "\n```sh\nx\n",
		E2EMarker("a") + "\n```sh\nx\n```\n" + E2EMarker("a") + "\n```sh\ny\n```\n",
	} {
		if _, err := E2EBlocks([]byte(bad)); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

// docs/quickstart.md: the blocks the e2e runs are there, and its apply uses
// the executor's field managers, like the generated README's.
func TestQuickstartBlocks(t *testing.T) {
	md, err := os.ReadFile("../../docs/quickstart.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := E2EBlocks(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"settings", "generate", "apply", "token", "secrets", "deploy", "validate", "teardown", "executor"} {
		if strings.TrimSpace(blocks[name]) == "" {
			t.Errorf("no e2e block %q", name)
		}
	}
	for _, s := range []string{"SPEC=", "PLATFORM=", "ARGOCD_URL=", "ARGOCD_CA="} {
		if !strings.Contains(blocks["settings"], "\n"+s) && !strings.HasPrefix(blocks["settings"], s) {
			t.Errorf("settings block lacks %s", s)
		}
	}
	apply := blocks["apply"]
	for _, s := range []string{
		`--field-manager="` + executor.PlatformFieldManager("$PLATFORM") + `" -k "generated/$PLATFORM/rbac/"`,
		"--field-manager=" + executor.FieldManager + ` -k "generated/$PLATFORM/cluster-workflow-templates/"`,
		"--field-manager=" + executor.FieldManager + ` -k "generated/$PLATFORM/workflow-templates/"`,
	} {
		if !strings.Contains(apply, s) {
			t.Errorf("apply block lacks %q:\n%s", s, apply)
		}
	}
}

// In plugin mode the README says what the cluster needs for it (the
// controller's ARGO_EXECUTOR_PLUGINS) and what failing that looks like; in
// pod mode it says nothing of plugins.
func TestReadmePluginMode(t *testing.T) {
	pod, _ := readmeOf(t, "../../examples/minimal.yaml")
	plugin, _ := readmeWith(t, "../../examples/minimal.yaml", func(p *spec.Platform) { p.Spec.Workflow.StepMode = spec.StepModePlugin })
	if strings.Contains(string(pod), "plugin") {
		t.Error("the pod-mode README mentions plugins")
	}
	for _, want := range []string{"**Plugin mode**", "ConfigMap `deployctl-executor-plugin`", "set env deployment/workflow-controller ARGO_EXECUTOR_PLUGINS=true", `"no plugin executed the template"`} {
		if !strings.Contains(string(plugin), want) {
			t.Errorf("the plugin-mode README lacks %q", want)
		}
	}
}

// Another generator's guide (Folder.Guide) is printed as given, after the
// "Run it" paragraphs and before the graph.
func TestReadmePrintsGuides(t *testing.T) {
	out, plans := compiled(t, "../../examples/minimal.yaml", nil)
	tree, err := Platform(out, plans,
		Folder{Dir: "events", Files: map[string][]byte{"a.yaml": []byte("a: 1\n")}, Guide: "**Guide A** here.\n\n"},
		Folder{Dir: "other", Files: map[string][]byte{"b.yaml": []byte("b: 1\n")}})
	if err != nil {
		t.Fatal(err)
	}
	md := string(tree["README.md"])
	g, teardownAt, graph := strings.Index(md, "\n**Guide A** here.\n\n## Dependency graph"), strings.Index(md, "**Tear down**"), strings.Index(md, "## Dependency graph")
	if g < 0 || g < teardownAt || strings.Count(md, "Guide A") != 1 || graph < g {
		t.Fatalf("guide missing or misplaced (at %d, tear down at %d, graph at %d):\n%s", g, teardownAt, graph, md[:min(len(md), 400)])
	}
}
