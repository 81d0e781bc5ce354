// Package testplatform makes random, valid platform specs for property
// tests and benchmarks: acyclic by construction (stacks and apps are
// ordered, and every edge points to something earlier).
package testplatform

import (
	"fmt"
	"math/rand"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/pkg/spec"
)

// Random returns a platform of about apps apps in stacks stacks.
func Random(rng *rand.Rand, stacks, apps int) *spec.Platform {
	p := &spec.Platform{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: "rnd"}}
	p.Spec.ArgoCD = spec.ArgoCD{Namespace: "argocd", Server: "argocd-server.argocd.svc:443"}
	p.Spec.Workflow = spec.Workflow{Namespace: "argo", ServiceAccount: "deployctl", Image: "example.com/deploystep:1"}
	p.Spec.Defaults.Source = &spec.Source{RepoURL: "https://git.example.com/p.git", TargetRevision: "main"}
	var earlier []string
	for s := 0; s < stacks; s++ {
		st := spec.Stack{Name: fmt.Sprintf("s%04d", s)}
		for t := max(0, s-8); t < s; t++ {
			if rng.Intn(4) == 0 {
				st.DependsOn = append(st.DependsOn, fmt.Sprintf("s%04d", t))
			}
		}
		n := 1 + rng.Intn(max(1, 2*apps/stacks))
		for a := 0; a < n; a++ {
			app := spec.App{Name: fmt.Sprintf("a%04d-%03d", s, a), Source: &spec.Source{Path: fmt.Sprintf("apps/s%04d/a%03d", s, a)}}
			// About two dependencies each, mostly on recent apps.
			for k := 0; k < 2 && len(earlier) > 0; k++ {
				if rng.Intn(3) == 0 {
					continue
				}
				e := earlier[max(0, len(earlier)-1-rng.Intn(min(len(earlier), 60)))]
				if !slices.Contains(app.DependsOn, e) {
					app.DependsOn = append(app.DependsOn, e)
				}
			}
			st.Apps = append(st.Apps, app)
			earlier = append(earlier, app.Name)
		}
		p.Spec.Stacks = append(p.Spec.Stacks, st)
	}
	return p
}

// Sized returns a platform of exactly n apps in stacks of about ten.
func Sized(seed int64, n int) *spec.Platform {
	rng := rand.New(rand.NewSource(seed))
	for {
		p := Random(rng, max(1, n/10), n)
		if c := Count(p); c >= n {
			trim(p, n)
			return p
		}
	}
}

// Count is the number of apps.
func Count(p *spec.Platform) int {
	c := 0
	for _, s := range p.Spec.Stacks {
		c += len(s.Apps)
	}
	return c
}

// trim drops apps past n (and their dependents' references to them).
func trim(p *spec.Platform, n int) {
	kept := map[string]bool{}
	var stacks []spec.Stack
	for _, s := range p.Spec.Stacks {
		var apps []spec.App
		for _, a := range s.Apps {
			if len(kept) < n {
				kept[a.Name] = true
				apps = append(apps, a)
			}
		}
		if len(apps) > 0 {
			s.Apps = apps
			stacks = append(stacks, s)
		}
	}
	names := map[string]bool{}
	for _, s := range stacks {
		names[s.Name] = true
	}
	for i := range stacks {
		stacks[i].DependsOn = slices.DeleteFunc(stacks[i].DependsOn, func(d string) bool { return !names[d] })
	}
	p.Spec.Stacks = stacks
}

// YAML renders a platform as a spec file.
func YAML(p *spec.Platform) []byte {
	data, err := yaml.Marshal(p)
	if err != nil {
		panic(err)
	}
	return data
}
