package importer

import (
	"slices"
	"sort"
	"strings"

	"github.com/deployctl/deployctl/pkg/spec"
)

// order sorts stacks by their wave (the parent Application's, else their
// lowest app's), apps by wave, each then by name: the file reads in the
// order the waves deployed, and the same input in any order gives the same
// file.
func (b *builder) order() {
	p := b.res.Platform
	byName := b.byName()
	stackWave := func(s *spec.Stack) int {
		if w, ok := b.stackWave(s, byName); ok {
			return w.wave
		}
		low := 0
		for i, a := range s.Apps {
			if w := byName[a.Name].wave; i == 0 || w < low {
				low = w
			}
		}
		return low
	}
	for i := range p.Spec.Stacks {
		apps := p.Spec.Stacks[i].Apps
		sort.Slice(apps, func(x, y int) bool {
			wx, wy := byName[apps[x].Name].wave, byName[apps[y].Name].wave
			if wx != wy {
				return wx < wy
			}
			return apps[x].Name < apps[y].Name
		})
	}
	st := p.Spec.Stacks
	sort.SliceStable(st, func(x, y int) bool {
		wx, wy := stackWave(&st[x]), stackWave(&st[y])
		if wx != wy {
			return wx < wy
		}
		return st[x].Name < st[y].Name
	})
}

func (b *builder) byName() map[string]*app {
	out := make(map[string]*app, len(b.apps))
	for _, a := range b.apps {
		out[a.name] = a
	}
	return out
}

type stackWave struct {
	wave  int
	group string // the parent Application's own parent: stacks are ordered among siblings
}

// stackWave is the wave of the Application a stack's apps all come from,
// when they all come from one in the input.
func (b *builder) stackWave(s *spec.Stack, byName map[string]*app) (stackWave, bool) {
	var parent *app
	for _, sa := range s.Apps {
		a := byName[sa.Name]
		if a.parent == nil || (parent != nil && a.parent != parent) {
			return stackWave{}, false
		}
		parent = a.parent
	}
	if parent == nil {
		return stackWave{}, false
	}
	w := stackWave{wave: parent.wave}
	switch {
	case parent.parent != nil:
		w.group = parent.parent.key
	case parent.parentName != "":
		w.group = "?" + parent.parentName
	}
	return w, true
}

// infer adds the dependencies sync waves imply, conservatively: inside a
// stack, every app waits for the apps of the nearest lower wave (apps
// without a wave are wave 0); a stack made of one parent Application's
// children waits for the sibling stacks (same grandparent) of the nearest
// lower wave, as the parent's own sync ordered them. Every edge is
// recorded, so the file can mark it as inferred. More than MaxWaveEdges
// edges inside stacks are refused before any is made (see waveLimit).
func (b *builder) infer() error {
	p := b.res.Platform
	byName := b.byName()
	byWave := make([]map[int][]string, len(p.Spec.Stacks)) // per stack: wave → apps, sorted
	n := 0
	for i, s := range p.Spec.Stacks {
		byWave[i] = map[int][]string{}
		for _, a := range s.Apps {
			w := byName[a.Name].wave
			byWave[i][w] = append(byWave[i][w], a.Name)
		}
		for w, names := range byWave[i] {
			byWave[i][w] = sorted(names)
		}
		for _, a := range s.Apps {
			if lower, ok := below(byWave[i], byName[a.Name].wave); ok {
				n += len(byWave[i][lower])
			}
		}
	}
	if err := b.waveLimit(n, byWave); err != nil {
		return err
	}
	// Sized once: n apps after a wave of m make n×m edges (320,000 for
	// 10,000 apps in 50 stacks of five waves), and appending one by one
	// would leave up to as much again unused.
	b.res.Edges = slices.Grow(b.res.Edges, n)
	for i := range p.Spec.Stacks {
		s := &p.Spec.Stacks[i]
		for j := range s.Apps {
			a := &s.Apps[j]
			w := byName[a.Name].wave
			lower, ok := below(byWave[i], w)
			if !ok {
				continue
			}
			a.DependsOn = slices.Grow(a.DependsOn, len(byWave[i][lower]))
			for _, dep := range byWave[i][lower] {
				a.DependsOn = append(a.DependsOn, dep)
				b.res.Edges = append(b.res.Edges, Edge{From: a.Name, To: dep, FromWave: w, ToWave: lower})
			}
		}
	}

	groups := map[string]map[int][]string{} // grandparent → wave → stacks
	waves := map[string]stackWave{}
	var unordered []string
	for i := range p.Spec.Stacks {
		s := &p.Spec.Stacks[i]
		w, ok := b.stackWave(s, byName)
		if !ok {
			unordered = append(unordered, s.Name)
			continue
		}
		waves[s.Name] = w
		if groups[w.group] == nil {
			groups[w.group] = map[int][]string{}
		}
		groups[w.group][w.wave] = append(groups[w.group][w.wave], s.Name)
	}
	for i := range p.Spec.Stacks {
		s := &p.Spec.Stacks[i]
		w, ok := waves[s.Name]
		if !ok {
			continue
		}
		lower, ok := below(groups[w.group], w.wave)
		if !ok {
			continue
		}
		for _, dep := range sorted(groups[w.group][lower]) {
			s.DependsOn = append(s.DependsOn, dep)
			b.res.Edges = append(b.res.Edges, Edge{From: s.Name, To: dep, FromWave: w.wave, ToWave: lower, Stack: true})
		}
	}
	if len(p.Spec.Stacks) > 1 && len(unordered) > 0 {
		b.note("order between stacks not inferred for %s (their apps do not all come from one parent Application in the input, whose wave would order them): "+
			"add a stack's dependsOn where it needs another stack", strings.Join(unordered, ", "))
	}
	return nil
}

// below is the nearest wave lower than w, if any.
func below(byWave map[int][]string, w int) (int, bool) {
	best, ok := 0, false
	for v := range byWave {
		if v < w && (!ok || v > best) {
			best, ok = v, true
		}
	}
	return best, ok
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
