// Package syncwave names the annotations that carry Argo CD sync waves on
// a spec's apps, and reads and writes the app-of-apps path one of them
// holds. `deployctl import` writes them, `deployctl plan --compare-waves`
// reads them. It is the part of argorules (Argo CD's rules) that plan
// needs, kept apart so that plan links neither Argo CD's types nor
// Kustomize, as argorules does: standard library only.
package syncwave

import (
	"fmt"
	"strconv"
	"strings"
)

const (
	// Annotation is the app's own sync wave, as its parent Application
	// (or the root of an app-of-apps) ordered it.
	Annotation = "deployctl.dev/sync-wave"
	// PathAnnotation lists the app-of-apps parents above the app,
	// outermost first, each with its own wave: "root@0/storage@-20". A
	// parent's wave orders it among its siblings, so its children start only
	// after the siblings of lower waves are Healthy.
	PathAnnotation = "deployctl.dev/sync-wave-path"
	// ArgoCDAnnotation is Argo CD's own annotation, read when the deployctl
	// one is absent.
	ArgoCDAnnotation = "argocd.argoproj.io/sync-wave"
)

// Step is one app-of-apps parent above an app.
type Step struct {
	Name string
	Wave int
}

// FormatPath renders parents as PathAnnotation holds them.
func FormatPath(steps []Step) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = s.Name + "@" + strconv.Itoa(s.Wave)
	}
	return strings.Join(parts, "/")
}

// ParsePath reads PathAnnotation; a step without "@WAVE" is a parent
// whose wave is unknown (0, as Argo CD treats a missing wave).
func ParsePath(s string) ([]Step, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []Step
	for _, part := range strings.Split(s, "/") {
		name, w, hasWave := strings.Cut(part, "@")
		step := Step{Name: name}
		if name == "" {
			return nil, fmt.Errorf("%q: empty parent name", s)
		}
		if hasWave {
			n, err := strconv.Atoi(w)
			if err != nil {
				return nil, fmt.Errorf("%q: wave %q is not an integer", s, w)
			}
			step.Wave = n
		}
		out = append(out, step)
	}
	return out, nil
}
