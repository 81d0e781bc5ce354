package executor

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/livestate"
	"github.com/deployctl/deployctl/pkg/step/aggregate"
	"github.com/deployctl/deployctl/pkg/step/argocd/appstatus"
)

// Aggregate health (RFC 5.5, docs/requirements.md#rfc-55-aggregate-health), from the package the validate step uses, so
// the executor and the validate workflow always agree: all Healthy →
// Healthy; any Progressing → Progressing; any Degraded or Missing →
// Degraded; any failed (the Application absent or unreadable) → Failed.
// Unknown and Suspended count as Degraded, not yet assessed as Progressing.
const (
	AggHealthy     = aggregate.Healthy
	AggProgressing = aggregate.Progressing
	AggDegraded    = aggregate.Degraded
	AggFailed      = aggregate.Failed
)

// appState is one Argo CD Application as Argo CD reports it, with its
// contribution to the aggregate.
type appState struct {
	Name string
	livestate.AppStatus
	Verdict string
}

// readApps reads the named Applications (read-only: one list per namespace
// they live in, Argo CD's and any app's applicationNamespace) and
// aggregates their health. Argo CD is the source of truth: its controller
// writes status.health and status.sync of each Application.
func (r *run) readApps(ctx context.Context, names []string) (map[string]*appState, string, error) {
	nsOf := r.appNamespaces(names)
	byKey := map[string]*unstructured.Unstructured{}
	for _, ns := range slices.Sorted(maps.Keys(invert(nsOf))) {
		list, err := r.cl.Dynamic.Resource(livestate.GVRApplication).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, AggFailed, fmt.Errorf("reading Applications in %s: %w", ns, err)
		}
		for i := range list.Items {
			byKey[ns+"/"+list.Items[i].GetName()] = &list.Items[i]
		}
	}
	states := map[string]*appState{}
	agg := AggHealthy
	for _, n := range names {
		s := appStateOf(n, byKey[nsOf[n]+"/"+n])
		states[n] = s
		agg = aggregate.Worst(agg, s.Verdict)
	}
	return states, agg, nil
}

// appNamespaces: where each named app's Application lives (its
// applicationNamespace, else Argo CD's namespace; a name the spec does not
// know, such as the root, in Argo CD's).
func (r *run) appNamespaces(names []string) map[string]string {
	p := r.cfg.DAG.Platform
	out := map[string]string{}
	for _, n := range names {
		out[n] = p.Spec.ArgoCD.Namespace
		if node := r.cfg.DAG.Node(n); node != nil && node.App != nil {
			out[n] = compile.AppNamespace(p, node.App)
		}
	}
	return out
}

func invert(m map[string]string) map[string]bool {
	out := map[string]bool{}
	for _, v := range m {
		out[v] = true
	}
	return out
}

func appStateOf(name string, u *unstructured.Unstructured) *appState {
	s := &appState{Name: name, AppStatus: livestate.ReadApp(u)}
	if u == nil {
		s.Verdict = AggFailed
		s.Problems = []string{"the Application does not exist"}
		return s
	}
	s.Verdict = aggregate.Verdict(s.Health)
	return s
}

// upToDate says whether every app is Healthy and Synced: then a new deploy
// run of the same spec would change nothing.
func upToDate(states map[string]*appState) (bool, string) {
	var bad []string
	for _, s := range states {
		switch {
		case !s.Exists:
			bad = append(bad, s.Name+" does not exist")
		case s.Health != appstatus.Healthy || s.Sync != appstatus.Synced:
			bad = append(bad, fmt.Sprintf("%s is %s/%s", s.Name, orDash(s.Health), orDash(s.Sync)))
		}
	}
	if len(bad) == 0 {
		return true, fmt.Sprintf("all %d apps are Healthy and Synced", len(states))
	}
	sort.Strings(bad)
	if len(bad) > 3 {
		bad = append(bad[:3], fmt.Sprintf("and %d more", len(bad)-3))
	}
	return false, strings.Join(bad, ", ")
}

func orDash[S ~string](s S) string {
	if s == "" {
		return "-"
	}
	return string(s)
}
