package generate

import (
	"bytes"
	"errors"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/internal/testplatform"
	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/render"
	"github.com/deployctl/deployctl/pkg/spec"
)

// These tests read the generated DAGs back from the rendered YAML and check
// them against the spec's meaning, computed here independently of package
// dag: an app waits for its dependsOn apps and for every app of its stack's
// dependsOn stacks, transitively.

func randomPlatform(rng *rand.Rand, stacks, apps int) *spec.Platform {
	return testplatform.Random(rng, stacks, apps)
}

func loadPlatform(t testing.TB, p *spec.Platform) *dag.DAG {
	t.Helper()
	data := testplatform.YAML(p)
	doc, err := spec.Load("random.yaml", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	d, err := dag.Build(doc)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// meaning is the spec's dependency relation over apps, from the spec alone.
type meaning struct {
	stackOf   map[string]string
	appsOf    map[string][]string
	direct    map[string][]string // app → dependsOn apps
	stackDeps map[string][]string // stack → dependsOn stacks
}

func meaningOf(p *spec.Platform) meaning {
	m := meaning{map[string]string{}, map[string][]string{}, map[string][]string{}, map[string][]string{}}
	for _, s := range p.Spec.Stacks {
		m.stackDeps[s.Name] = s.DependsOn
		for _, a := range s.Apps {
			m.stackOf[a.Name] = s.Name
			m.appsOf[s.Name] = append(m.appsOf[s.Name], a.Name)
			m.direct[a.Name] = a.DependsOn
		}
	}
	return m
}

// waits is every app a must wait for, transitively.
func (m meaning) waits(a string) map[string]bool {
	out := map[string]bool{}
	var visit func(string)
	visit = func(x string) {
		next := append([]string(nil), m.direct[x]...)
		for _, s := range m.stackDeps[m.stackOf[x]] {
			next = append(next, m.appsOf[s]...)
		}
		for _, y := range next {
			if !out[y] {
				out[y] = true
				visit(y)
			}
		}
	}
	visit(a)
	return out
}

// dagOf reads a generated WorkflowTemplate's DAG: task → depends.
func dagOf(t *testing.T, tree render.Tree, action string) (map[string][]string, map[string]wfv1.DAGTask) {
	t.Helper()
	var wt wfv1.WorkflowTemplate
	if err := yaml.UnmarshalStrict(tree["workflow-templates/"+action+".yaml"], &wt); err != nil {
		t.Fatal(err)
	}
	deps, tasks := map[string][]string{}, map[string]wfv1.DAGTask{}
	for _, task := range wt.Spec.Templates[0].DAG.Tasks {
		tasks[task.Name] = task
		deps[task.Name] = []string{}
		if task.Depends == "" {
			continue
		}
		for _, term := range strings.Split(task.Depends, " && ") {
			name, ok := strings.CutSuffix(term, ".Succeeded")
			if !ok {
				t.Fatalf("%s: task %s: depends term %q is not NAME.Succeeded", action, task.Name, term)
			}
			deps[task.Name] = append(deps[task.Name], name)
		}
		sort.Strings(deps[task.Name])
	}
	return deps, tasks
}

func reach(deps map[string][]string, from string) map[string]bool {
	out := map[string]bool{}
	stack := []string{from}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, d := range deps[n] {
			if !out[d] {
				out[d] = true
				stack = append(stack, d)
			}
		}
	}
	return out
}

func appsOnly(set map[string]bool, m meaning) []string {
	var out []string
	for n := range set {
		if _, ok := m.stackOf[n]; ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func keys(set map[string]bool) []string {
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// checkDAGs asserts the generated deploy and teardown DAGs mean exactly the spec.
func checkDAGs(t *testing.T, p *spec.Platform, tree render.Tree) {
	t.Helper()
	m := meaningOf(p)
	deploy, tasks := dagOf(t, tree, "deploy")
	for name, task := range tasks {
		if name == compile.HandoffTask {
			continue
		}
		if stack, isApp := m.stackOf[name]; isApp {
			// Direct: dependsOn apps plus the joins of the stack's dependsOn stacks.
			want := append(append([]string(nil), m.direct[name]...), m.stackDeps[stack]...)
			sort.Strings(want)
			if !slices.Equal(deploy[name], want) {
				t.Errorf("deploy task %s depends on %v, want exactly %v", name, deploy[name], want)
			}
			if task.TemplateRef == nil || task.TemplateRef.Name != compile.CWTSyncAndWait || !task.TemplateRef.ClusterScope {
				t.Errorf("deploy task %s does not call the sync-and-wait ClusterWorkflowTemplate: %+v", name, task.TemplateRef)
			}
			// Transitive: exactly the apps the spec says it waits for.
			if got, want := appsOnly(reach(deploy, name), m), keys(m.waits(name)); !slices.Equal(got, want) {
				t.Errorf("deploy task %s waits for %v, want %v", name, got, want)
			}
			continue
		}
		want := append([]string(nil), m.appsOf[name]...)
		sort.Strings(want)
		if !slices.Equal(deploy[name], want) {
			t.Errorf("join %s depends on %v, want its apps %v", name, deploy[name], want)
		}
	}
	// Teardown is the exact reverse: t waits for u iff u waited for t.
	teardown, _ := dagOf(t, tree, "teardown")
	for name := range deploy {
		if name == compile.HandoffTask {
			continue
		}
		var want []string
		for u, ds := range deploy {
			if u != compile.HandoffTask && slices.Contains(ds, name) {
				want = append(want, u)
			}
		}
		sort.Strings(want)
		got := slices.DeleteFunc(append([]string(nil), teardown[name]...), func(s string) bool { return s == compile.HandoffTask })
		if !slices.Equal(got, want) {
			t.Errorf("teardown task %s waits for %v, want the reverse of deploy %v", name, got, want)
		}
	}
	if len(teardown) != len(deploy) {
		t.Errorf("teardown has %d tasks, deploy %d", len(teardown), len(deploy))
	}
}

func TestGeneratedDAGMeansTheSpec(t *testing.T) {
	for _, file := range examples(t) {
		t.Run(file, func(t *testing.T) {
			d, err := dag.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			tree, _, err := Tree(d, "platform")
			if err != nil {
				t.Fatal(err)
			}
			checkDAGs(t, d.Platform, tree)
		})
	}
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 25; i++ {
		p := randomPlatform(rng, 2+rng.Intn(6), 5+rng.Intn(40))
		d := loadPlatform(t, p)
		tree, _, err := Tree(d, "platform")
		if err != nil {
			t.Fatal(err)
		}
		checkDAGs(t, p, tree)
	}
}

func TestScopeClosure(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for i := 0; i < 10; i++ {
		p := randomPlatform(rng, 3+rng.Intn(4), 10+rng.Intn(30))
		m := meaningOf(p)
		d := loadPlatform(t, p)
		var all []string
		for a := range m.stackOf {
			all = append(all, a)
		}
		sort.Strings(all)
		target := all[rng.Intn(len(all))]
		stack := m.stackOf[all[rng.Intn(len(all))]]
		for _, sc := range []struct {
			scope string
			seeds []string
		}{{"app:" + target, []string{target}}, {"stack:" + stack, m.appsOf[stack]}} {
			tree, _, err := Tree(d, sc.scope)
			if err != nil {
				t.Fatal(err)
			}
			wantDeploy, wantTeardown := map[string]bool{}, map[string]bool{}
			for _, s := range sc.seeds {
				wantDeploy[s], wantTeardown[s] = true, true
				for w := range m.waits(s) {
					wantDeploy[w] = true
				}
				for _, u := range all {
					if m.waits(u)[s] {
						wantTeardown[u] = true
					}
				}
			}
			for action, want := range map[string]map[string]bool{"deploy": wantDeploy, "teardown": wantTeardown} {
				deps, _ := dagOf(t, tree, action)
				got := map[string]bool{}
				for n := range deps {
					got[n] = true
				}
				if g, w := appsOnly(got, m), keys(want); !slices.Equal(g, w) {
					t.Errorf("%s %s: apps %v, want %v", sc.scope, action, g, w)
				}
			}
		}
	}
}

func TestDeterministicAcrossRunsAndOrderings(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 10; i++ {
		p := randomPlatform(rng, 3+rng.Intn(5), 10+rng.Intn(40))
		a, _, err := Tree(loadPlatform(t, p), "platform")
		if err != nil {
			t.Fatal(err)
		}
		b, _, _ := Tree(loadPlatform(t, p), "platform")
		// The same meaning written in another order: stacks, apps and
		// dependsOn entries reversed.
		q := *p
		q.Spec.Stacks = slices.Clone(p.Spec.Stacks)
		slices.Reverse(q.Spec.Stacks)
		for s := range q.Spec.Stacks {
			st := &q.Spec.Stacks[s]
			st.DependsOn = slices.Clone(st.DependsOn)
			slices.Reverse(st.DependsOn)
			st.Apps = slices.Clone(st.Apps)
			slices.Reverse(st.Apps)
			for j := range st.Apps {
				st.Apps[j].DependsOn = slices.Clone(st.Apps[j].DependsOn)
				slices.Reverse(st.Apps[j].DependsOn)
			}
		}
		c, _, _ := Tree(loadPlatform(t, &q), "platform")
		for _, other := range []render.Tree{b, c} {
			if !slices.Equal(a.Paths(), other.Paths()) {
				t.Fatalf("file sets differ: %v vs %v", a.Paths(), other.Paths())
			}
			for _, path := range a.Paths() {
				if !bytes.Equal(a[path], other[path]) {
					t.Fatalf("%s differs between equivalent inputs", path)
				}
			}
		}
	}
}

// TestTooLargeIsRefused: a platform whose deploy template would exceed the
// object size limit is refused with advice, not written broken.
func TestTooLargeIsRefused(t *testing.T) {
	d := loadPlatform(t, testplatform.Sized(1, 3000))
	_, _, err := Tree(d, "platform")
	var tl *render.TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("want *render.TooLargeError, got %v", err)
	}
	if !strings.Contains(err.Error(), "split the platform") || tl.Apps != 3000 {
		t.Errorf("no advice or wrong count: %v", err)
	}
}
