package insight

import (
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
)

func dagSpec(tasks ...wfv1.DAGTask) *wfv1.WorkflowSpec {
	return &wfv1.WorkflowSpec{Entrypoint: "deploy", Templates: []wfv1.Template{{Name: "deploy", DAG: &wfv1.DAGTemplate{Tasks: tasks}}}}
}

func nodeNames(nodes []*Node) string {
	var s []string
	for _, n := range nodes {
		s = append(s, n.Name)
	}
	return strings.Join(s, ",")
}

// Nodes run dependencies first, ties by name; up- and downstream are the
// transitive closures in that order; a dependency on no task is ignored.
func TestRunOrderAndClosures(t *testing.T) {
	r := newRun(&wfv1.Workflow{}, dagSpec(
		wfv1.DAGTask{Name: "web", Depends: "db.Succeeded && (cache.Succeeded || ghost.Failed)"},
		wfv1.DAGTask{Name: "db", Dependencies: []string{"base"}},
		wfv1.DAGTask{Name: "cache", Depends: "base"},
		wfv1.DAGTask{Name: "base"},
		wfv1.DAGTask{Name: "alone"},
	), time.Time{})
	if got := nodeNames(r.Nodes); got != "alone,base,cache,db,web" {
		t.Errorf("order %s", got)
	}
	if got := nodeNames(r.upstream(r.byName["web"])); got != "base,cache,db" {
		t.Errorf("upstream of web %s", got)
	}
	if got := nodeNames(r.downstream(r.byName["base"])); got != "cache,db,web" {
		t.Errorf("downstream of base %s", got)
	}
	if got := nodeNames(r.downstream(r.byName["alone"])); got != "" {
		t.Errorf("downstream of alone %s", got)
	}
}

// A cycle cannot run, but status still shows every node, as listed.
func TestRunWithACycleKeepsEveryNode(t *testing.T) {
	r := newRun(&wfv1.Workflow{}, dagSpec(
		wfv1.DAGTask{Name: "b", Depends: "a"},
		wfv1.DAGTask{Name: "a", Depends: "b"},
		wfv1.DAGTask{Name: "c"},
	), time.Time{})
	if got := nodeNames(r.Nodes); got != "b,a,c" {
		t.Errorf("order %s", got)
	}
	if got := nodeNames(r.upstream(r.byName["a"])); got != "b,a" {
		t.Errorf("upstream of a %s", got)
	}
}
