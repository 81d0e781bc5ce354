package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/generate"
	"github.com/deployctl/deployctl/pkg/render"
	"github.com/deployctl/deployctl/pkg/spec"
)

// TestScaleGen needs no cluster: the synthetic platform is deterministic,
// passes the spec's own checks, has the depth and edges its flags say, and
// bad flags are refused all at once.
func TestScaleGen(t *testing.T) {
	g := scaleGen{Apps: 300, Depth: 10, FanIn: 3, Kind: "configmap", StepMode: "plugin", Parallelism: 50}
	a, err := g.spec()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := g.spec()
	if !bytes.Equal(a, b) {
		t.Fatal("two specs of the same flags differ")
	}
	m1, _ := g.manifests()
	m2, _ := g.manifests()
	if len(m1) != g.Apps || fmt.Sprint(m1) != fmt.Sprint(m2) {
		t.Fatalf("manifests: %d folders (want %d) or not deterministic", len(m1), g.Apps)
	}
	d, err := scaleDAG(a)
	if err != nil {
		t.Fatal(err)
	}
	edges, longest := 0, map[string]int{}
	order, err := d.Graph.TopoOrder()
	if err != nil {
		t.Fatal(err)
	}
	depth := 0
	for _, n := range order {
		if d.Node(n).Kind != dag.App {
			continue
		}
		l := 1
		for _, p := range d.Graph.Deps(n) {
			if d.Node(p).Kind == dag.App {
				edges++
				l = max(l, longest[p]+1)
			}
		}
		longest[n] = l
		depth = max(depth, l)
	}
	if edges != g.edges() || edges != (300-30)*3 || depth != g.Depth {
		t.Errorf("DAG: %d edges (gen says %d, want %d), longest chain %d apps (want %d)", edges, g.edges(), 270*3, depth, g.Depth)
	}
	for i := 0; i < g.Apps; i++ {
		a := scaleApp(i)
		if fmt.Sprint(g.depsOf(a)) != fmt.Sprint(d.Graph.Deps(a)) {
			t.Fatalf("depsOf(%s) = %v, the DAG says %v", a, g.depsOf(a), d.Graph.Deps(a))
		}
	}
	pod := g
	pod.Kind, pod.StepMode = "pod", "pod"
	pm, _ := pod.manifests()
	if !strings.Contains(string(pm["scale/a0000/a0000.yaml"]), "image: local.test/e2eapp:dev") {
		t.Error("kind pod: no e2eapp Deployment")
	}
	bad := scaleGen{Apps: 0, Depth: 3, FanIn: -1, Kind: "job", StepMode: "x"}
	_, err = bad.spec()
	if err == nil {
		t.Fatal("bad flags accepted")
	}
	for _, want := range []string{"apps 0", "depth 3", "fan-in -1", `kind "job"`, `step mode "x"`, "parallelism 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

func scaleDAG(specYAML []byte) (*dag.DAG, error) {
	doc, err := spec.Load("scale.yaml", specYAML)
	if err != nil {
		return nil, err
	}
	return dag.Build(doc)
}

// scaleSizes is what one platform size costs in object bytes.
type scaleSizes struct {
	apps                  int
	deployYAML, deployAPI int // the deploy WorkflowTemplate as generated (YAML) and as the API stores it (JSON)
	teardownAPI           int
	configMapsAPI         int    // the largest other object (JSON) generate writes beside them, when any
	storedWorkflow        int    // a Workflow of the deploy, before any node: the template's spec in its status, twice (see measureScale)
	inlineWorkflow        int    // the same Workflow with the template's spec inline (E2E_SCALE_INLINE=1): the spec once
	refused               string // generate's refusal, if it refuses
}

func measureScale(g scaleGen) (scaleSizes, error) {
	s := scaleSizes{apps: g.Apps}
	y, err := g.spec()
	if err != nil {
		return s, err
	}
	d, err := scaleDAG(y)
	if err != nil {
		return s, err
	}
	out, err := compile.Compile(d, "platform")
	if err != nil {
		return s, err
	}
	wt := out.WorkflowTemplates[dag.Deploy]
	if b, err := render.Object(wt); err == nil {
		s.deployYAML = len(b)
	}
	s.deployAPI = jsonSize(wt)
	s.teardownAPI = jsonSize(out.WorkflowTemplates[dag.Teardown])
	wf := out.Workflows[dag.Deploy].DeepCopy()
	wf.Name = g.name() + "-deploy-abcde"
	wf.Status.StoredWorkflowSpec = &wt.Spec
	// Argo Workflows v4.0.7 (workflow/templateresolution) also keeps every
	// template a run resolves in status.storedTemplates: the deploy's main
	// DAG a second time, and the CWT it calls.
	wf.Status.StoredTemplates = map[string]wfv1.Template{}
	for _, t := range wt.Spec.Templates {
		wf.Status.StoredTemplates["namespaced/"+wt.Name+"/"+t.Name] = t
	}
	for _, c := range out.ClusterTemplates {
		for i := range c.Spec.Templates {
			if strings.HasPrefix(c.Name, compile.CWTSyncAndWait) {
				wf.Status.StoredTemplates["cluster/"+c.Name+"/"+c.Spec.Templates[i].Name] = c.Spec.Templates[i]
			}
		}
	}
	s.storedWorkflow = jsonSize(wf)
	// Inline, Argo stores no workflow spec and no template the Workflow
	// calls in itself (resolveTemplateReference): only the CWT's.
	in := wf.DeepCopy()
	in.Spec = *wt.Spec.DeepCopy()
	in.Status.StoredWorkflowSpec = nil
	for k := range in.Status.StoredTemplates {
		if strings.HasPrefix(k, "namespaced/") {
			delete(in.Status.StoredTemplates, k)
		}
	}
	s.inlineWorkflow = jsonSize(in)
	if _, _, err := generate.Tree(d, "platform"); err != nil {
		var tl *render.TooLargeError
		if !errors.As(err, &tl) {
			return s, err
		}
		s.refused = fmt.Sprintf("%s %.2f MiB", tl.File, float64(tl.Size)/(1<<20))
	}
	return s, nil
}

func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return len(b)
}

// BenchmarkScaleSizes measures, without a cluster, what the synthetic
// platform of N apps costs in object bytes (depth 10, fan-in 2, plugin
// mode; pod mode's tasks are the same):
//
//	go test ./test/e2e -run '^$' -bench ScaleSizes -benchtime 1x
func BenchmarkScaleSizes(b *testing.B) {
	for _, n := range []int{41, 100, 300, 500, 600, 700, 1000, 1500, 2000} {
		g := scaleGen{Apps: n, Depth: 10, FanIn: 2, Kind: "configmap", StepMode: "plugin", Parallelism: 50}
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) {
			var s scaleSizes
			var err error
			for i := 0; i < b.N; i++ {
				if s, err = measureScale(g); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(s.deployYAML), "deployWT-yaml-B")
			b.ReportMetric(float64(s.deployAPI), "deployWT-json-B")
			b.ReportMetric(float64(s.deployAPI)/float64(n), "deployWT-json-B/app")
			b.ReportMetric(float64(s.teardownAPI), "teardownWT-json-B")
			b.ReportMetric(float64(s.teardownAPI)/float64(n), "teardownWT-json-B/app")
			b.ReportMetric(float64(s.storedWorkflow), "workflow0-json-B")
			b.ReportMetric(float64(s.inlineWorkflow), "workflow0-inline-json-B")
			if s.refused != "" {
				b.Logf("%d apps: generate refuses (%s)", n, s.refused)
			}
		})
	}
}
