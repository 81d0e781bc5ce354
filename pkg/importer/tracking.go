package importer

import (
	"encoding/json"
	"strconv"
	"strings"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"

	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/plan"
)

// Argo CD's resource tracking (argo-cd util/argo/resource_tracking.go): the
// label application.instanceLabelKey (argocd.argoproj.io/instance, the
// documented custom key, or app.kubernetes.io/instance, Argo CD's default),
// or the annotation argocd.argoproj.io/tracking-id.
const (
	labelAppInstance = "app.kubernetes.io/instance" // Argo CD's default instanceLabelKey
	helmHookWeight   = "helm.sh/hook-weight"
)

// trackingID is a parsed argocd.argoproj.io/tracking-id:
// <application-name>:<group>/<kind>:<namespace>/<name>.
type trackingID struct {
	App, Group, Kind, Namespace, Name string
}

// parseTrackingID reads the annotation exactly as Argo CD's
// ParseAppInstanceValue: three parts split on the first two colons, the
// second and third each exactly two parts split on "/".
func parseTrackingID(v string) (trackingID, bool) {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) != 3 {
		return trackingID{}, false
	}
	gk := strings.Split(parts[1], "/")
	nn := strings.Split(parts[2], "/")
	if len(gk) != 2 || len(nn) != 2 {
		return trackingID{}, false
	}
	return trackingID{App: parts[0], Group: gk[0], Kind: gk[1], Namespace: nn[0], Name: nn[1]}, true
}

// tracking is how an Application names the Application that manages it.
type tracking struct {
	kind, ns, name string
	// by names the method, for notes: "ownerReference", the label or the
	// annotation key.
	by string
	// mustResolve: app.kubernetes.io/instance is also Helm's release label
	// on everything a chart renders, so it names a parent only when that
	// parent is in the input.
	mustResolve bool
}

// parentRef is the Application (or ApplicationSet) that manages a: an owner
// reference, else Argo CD's tracking annotation, else its tracking labels.
// An app outside Argo CD's namespace is tracked as "namespace_name". A
// tracking-id that describes another object (copied with the manifest)
// does not count, as Argo CD does not count it; bad says so.
func parentRef(a *appv1.Application) (t tracking, bad string) {
	for _, o := range a.OwnerReferences {
		if strings.HasPrefix(o.APIVersion, "argoproj.io/") && (o.Kind == "Application" || o.Kind == "ApplicationSet") {
			return tracking{kind: o.Kind, ns: a.Namespace, name: o.Name, by: "ownerReference"}, ""
		}
	}
	if v, ok := a.Annotations[argoTrackingID]; ok {
		id, ok := parseTrackingID(v)
		switch {
		case !ok:
			bad = "annotation " + argoTrackingID + " " + strconv.Quote(v) + " is not <app>:<group>/<kind>:<namespace>/<name>"
		case id.Group != "argoproj.io" || id.Kind != "Application" || id.Name != a.Name || (id.Namespace != "" && a.Namespace != "" && id.Namespace != a.Namespace):
			bad = "annotation " + argoTrackingID + " " + strconv.Quote(v) + " describes another object"
		case id.App != "":
			return instance(id.App, argoTrackingID, false), ""
		}
	}
	if v := a.Labels[argoInstance]; v != "" {
		return instance(v, argoInstance, false), bad
	}
	if v := a.Labels[labelAppInstance]; v != "" {
		return instance(v, labelAppInstance, true), bad
	}
	return tracking{}, bad
}

func instance(v, by string, mustResolve bool) tracking {
	if ns, name, ok := strings.Cut(v, "_"); ok {
		return tracking{kind: "Application", ns: ns, name: name, by: by, mustResolve: mustResolve}
	}
	return tracking{kind: "Application", name: v, by: by, mustResolve: mustResolve}
}

// syncWave is the wave Argo CD gives an object (gitops-engine
// pkg/sync/syncwaves.Wave): argocd.argoproj.io/sync-wave when strconv.Atoi
// reads it (no trimming: " 5" is not a number), else helm.sh/hook-weight
// read the same way, else 0. has says whether either annotation gave the
// wave; unreadable says the sync-wave annotation is there but Argo CD
// cannot read it.
func syncWave(ann map[string]string) (wave int, has, unreadable bool) {
	text, written := ann[plan.ArgoCDSyncWave]
	if written {
		if n, err := strconv.Atoi(text); err == nil {
			return n, true, false
		}
	}
	if text, ok := ann[helmHookWeight]; ok {
		if n, err := strconv.Atoi(text); err == nil {
			return n, true, written
		}
	}
	return 0, false, written
}

// withoutLabel is m, for the round trip, without a label the import leaves
// out on purpose (its notes say so).
func withoutLabel(m *appread.Manifest, key string) *appread.Manifest {
	raw := m.View()
	md, _ := raw["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	if _, ok := labels[key]; !ok {
		return m
	}
	delete(labels, key)
	out := *m
	out.Raw, _ = json.Marshal(raw)
	return &out
}
