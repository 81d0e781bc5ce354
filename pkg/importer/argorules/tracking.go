// Package argorules is how Argo CD itself reads the Applications an import
// starts from, as its code has it: which Application manages another
// (tracking), the wave an object syncs in (sync waves, hooks), and what a
// directory source deploys (repository URLs, manifest files, globs). The
// importer infers stacks and dependencies from these; each rule is tested
// against Argo CD's behaviour beside it.
package argorules

import (
	"strconv"
	"strings"

	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
)

// Argo CD's resource tracking (argo-cd util/argo/resource_tracking.go): the
// label application.instanceLabelKey (argocd.argoproj.io/instance, the
// documented custom key, or app.kubernetes.io/instance, Argo CD's default),
// or the annotation argocd.argoproj.io/tracking-id.
const (
	Instance       = "argocd.argoproj.io/instance"    // the parent's tracking label (a custom instanceLabelKey)
	TrackingIDKey  = "argocd.argoproj.io/tracking-id" // annotation tracking: "app:group/kind:ns/name"
	AppInstance    = "app.kubernetes.io/instance"     // Argo CD's default instanceLabelKey
	helmHookWeight = "helm.sh/hook-weight"
)

// TrackingID is a parsed argocd.argoproj.io/tracking-id:
// <application-name>:<group>/<kind>:<namespace>/<name>.
type TrackingID struct {
	App, Group, Kind, Namespace, Name string
}

// ParseTrackingID reads the annotation exactly as Argo CD's
// ParseAppInstanceValue: three parts split on the first two colons, the
// second and third each exactly two parts split on "/".
func ParseTrackingID(v string) (TrackingID, bool) {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) != 3 {
		return TrackingID{}, false
	}
	gk := strings.Split(parts[1], "/")
	nn := strings.Split(parts[2], "/")
	if len(gk) != 2 || len(nn) != 2 {
		return TrackingID{}, false
	}
	return TrackingID{App: parts[0], Group: gk[0], Kind: gk[1], Namespace: nn[0], Name: nn[1]}, true
}

// Tracking is how an Application names the Application that manages it.
type Tracking struct {
	Kind, NS, Name string
	// By names the method, for notes: "ownerReference", the label or the
	// annotation key.
	By string
	// MustResolve: app.kubernetes.io/instance is also Helm's release label
	// on everything a chart renders, so it names a parent only when that
	// parent is in the input.
	MustResolve bool
}

// ParentRef is the Application (or ApplicationSet) that manages a: an owner
// reference, else Argo CD's tracking annotation, else its tracking labels.
// An app outside Argo CD's namespace is tracked as "namespace_name". A
// tracking-id that describes another object (copied with the manifest)
// does not count, as Argo CD does not count it; bad says so.
func ParentRef(a *appv1.Application) (t Tracking, bad string) {
	for _, o := range a.OwnerReferences {
		if strings.HasPrefix(o.APIVersion, "argoproj.io/") && (o.Kind == "Application" || o.Kind == "ApplicationSet") {
			return Tracking{Kind: o.Kind, NS: a.Namespace, Name: o.Name, By: "ownerReference"}, ""
		}
	}
	if v, ok := a.Annotations[TrackingIDKey]; ok {
		id, ok := ParseTrackingID(v)
		switch {
		case !ok:
			bad = "annotation " + TrackingIDKey + " " + strconv.Quote(v) + " is not <app>:<group>/<kind>:<namespace>/<name>"
		case id.Group != "argoproj.io" || id.Kind != "Application" || id.Name != a.Name || (id.Namespace != "" && a.Namespace != "" && id.Namespace != a.Namespace):
			bad = "annotation " + TrackingIDKey + " " + strconv.Quote(v) + " describes another object"
		case id.App != "":
			return instance(id.App, TrackingIDKey, false), ""
		}
	}
	if v := a.Labels[Instance]; v != "" {
		return instance(v, Instance, false), bad
	}
	if v := a.Labels[AppInstance]; v != "" {
		return instance(v, AppInstance, true), bad
	}
	return Tracking{}, bad
}

func instance(v, by string, mustResolve bool) Tracking {
	if ns, name, ok := strings.Cut(v, "_"); ok {
		return Tracking{Kind: "Application", NS: ns, Name: name, By: by, MustResolve: mustResolve}
	}
	return Tracking{Kind: "Application", Name: v, By: by, MustResolve: mustResolve}
}
