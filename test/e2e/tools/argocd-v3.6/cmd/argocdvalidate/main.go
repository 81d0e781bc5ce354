// Command argocdvalidate runs the checks Argo CD v3.6's API server makes
// when an Application is created (server/application Create →
// validateAndNormalizeApp, util/argo) that need no live repository or
// cluster, on Applications given as JSON lines on stdin:
//
//	{"id": "anything", "app": {...an Application...}}
//
// and prints one JSON line per input, in order:
//
//	{"id": "anything", "refusals": ["...", ...]}
//
// What it runs, in Argo CD's words (its own functions, not copies):
//   - the JSON decode into v1alpha1.Application, as argocd-server's
//     grpc-gateway (util/grpc JSONMarshaler: encoding/json) does;
//   - validateAndNormalizeApp: a name, unique source names among sources,
//     argo.GetDestinationCluster (name and server not both, not neither),
//     argo.ValidatePermissions (each source's repoURL and path, chart or
//     ref; a chart's targetRevision; the source hydrator's required
//     fields), argo.ValidateManagedByURL;
//   - what ValidateRepo (create's default validate=true) checks of the
//     spec alone: ApplicationSource.ExplicitType (one source type per
//     source) and argo.GetRefSources (ref keys: characters, unique).
//
// What it does not judge: what needs Argo CD's state — the AppProject
// (here one that permits every repository and destination), the cluster
// (every destination server or name is taken as a known cluster), the
// repository and the manifests it renders. Exit status 0 whatever the
// verdicts; 3 on unreadable input.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	appv1 "github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/argo"
	"github.com/argoproj/argo-cd/v3/util/db"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// knownClusters stands for Argo CD's database: every cluster asked for
// exists, every repository is registered. The methods validation calls
// are the only ones implemented; any other call panics, which would show
// that Argo CD's validation reached further than this program says.
type knownClusters struct{ db.ArgoDB }

func (knownClusters) GetCluster(_ context.Context, server string) (*appv1.Cluster, error) {
	return &appv1.Cluster{Server: server, Name: server}, nil
}

func (knownClusters) GetClusterServersByName(_ context.Context, name string) ([]string, error) {
	return []string{"https://" + name + ".clusters.invalid"}, nil
}

func (knownClusters) GetProjectClusters(context.Context, string) ([]*appv1.Cluster, error) {
	return nil, nil
}

func (knownClusters) GetRepository(_ context.Context, url, project string) (*appv1.Repository, error) {
	return &appv1.Repository{Repo: url, Project: project}, nil
}

// permissive is an AppProject that permits every source and destination:
// a project's own limits are the operator's, not a rule of the spec.
var permissive = &appv1.AppProject{
	ObjectMeta: metav1.ObjectMeta{Name: "default"},
	Spec: appv1.AppProjectSpec{
		SourceRepos:  []string{"*"},
		Destinations: []appv1.ApplicationDestination{{Server: "*", Name: "*", Namespace: "*"}},
	},
}

type input struct {
	ID  string          `json:"id"`
	App json.RawMessage `json:"app"`
}

type verdict struct {
	ID       string   `json:"id"`
	Refusals []string `json:"refusals"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		if len(in.Bytes()) == 0 {
			continue
		}
		var x input
		if err := json.Unmarshal(in.Bytes(), &x); err != nil {
			fmt.Fprintf(os.Stderr, "argocdvalidate: not a JSON line {\"id\", \"app\"}: %v\n", err)
			os.Exit(3)
		}
		r := refusals(x.App)
		if r == nil {
			r = []string{}
		}
		if err := enc.Encode(verdict{ID: x.ID, Refusals: r}); err != nil {
			fmt.Fprintln(os.Stderr, "argocdvalidate:", err)
			os.Exit(3)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "argocdvalidate:", err)
		os.Exit(3)
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "argocdvalidate:", err)
		os.Exit(3)
	}
}

// refusals is what Argo CD's create refuses in one Application, nil when
// nothing.
func refusals(raw json.RawMessage) (out []string) {
	defer func() {
		if p := recover(); p != nil {
			out = append(out, fmt.Sprintf("argocdvalidate: Argo CD's validation needed more than this program gives it: %v", p))
		}
	}()
	var app appv1.Application
	if err := json.Unmarshal(raw, &app); err != nil {
		return []string{"decode: " + err.Error()}
	}
	ctx := context.Background()
	refuse := func(what string, err error) {
		if err != nil {
			out = append(out, what+": "+err.Error())
		}
	}
	conditions := func(what string, cs []appv1.ApplicationCondition, err error) {
		refuse(what, err)
		if len(cs) > 0 {
			refuse(what, errors.New(argo.FormatAppConditions(cs)))
		}
	}
	// validateAndNormalizeApp, in its order.
	if app.GetName() == "" {
		refuse("create", errors.New("resource name may not be empty"))
	}
	if app.Spec.HasMultipleSources() {
		seen := map[string]bool{}
		for _, s := range app.Spec.Sources {
			if s.Name != "" && seen[s.Name] {
				refuse("create", fmt.Errorf("application %s has duplicate source name: %s", app.Name, s.Name))
			}
			seen[s.Name] = true
		}
	}
	_, err := argo.GetDestinationCluster(ctx, app.Spec.Destination, knownClusters{})
	refuse("destination", err)
	// ValidateRepo's checks of the spec alone.
	for _, s := range app.Spec.GetSources() {
		_, err := s.ExplicitType()
		refuse("source type", err)
	}
	_, err = argo.GetRefSources(ctx, app.Spec.GetSources(), app.Spec.Project, knownClusters{}.GetRepository, []string{})
	refuse("ref sources", err)
	cs, err := argo.ValidatePermissions(ctx, &app.Spec, permissive, knownClusters{})
	conditions("permissions", cs, err)
	conditions("managed-by-url", argo.ValidateManagedByURL(&app), nil)
	return out
}
