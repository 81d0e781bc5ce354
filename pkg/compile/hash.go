package compile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// specHash identifies the compiled spec and scope: the executor finds the
// last run of the same spec by it, to resume instead of starting over. It
// hashes a canonical form, so reordering stacks, apps or dependsOn entries
// (which changes nothing) keeps the hash.
func specHash(d *dag.DAG, scope string) (string, error) {
	raw, err := json.Marshal(struct {
		Scope    string
		Platform *spec.Platform
	}{scope, canonical(d.Platform)})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])[:16], nil
}

// canonical is a copy of p with every order that carries no meaning sorted.
func canonical(p *spec.Platform) *spec.Platform {
	c := *p
	c.Spec.Stacks = make([]spec.Stack, len(p.Spec.Stacks))
	for i, s := range p.Spec.Stacks {
		s.DependsOn = sorted(s.DependsOn)
		s.Apps = append([]spec.App(nil), s.Apps...)
		for j := range s.Apps {
			s.Apps[j].DependsOn = sorted(s.Apps[j].DependsOn)
		}
		sort.Slice(s.Apps, func(a, b int) bool { return s.Apps[a].Name < s.Apps[b].Name })
		c.Spec.Stacks[i] = s
	}
	sort.Slice(c.Spec.Stacks, func(a, b int) bool { return c.Spec.Stacks[a].Name < c.Spec.Stacks[b].Name })
	return &c
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
