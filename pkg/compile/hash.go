package compile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/spec"
)

// specHash identifies the compiled spec and scope: the executor finds the
// last run of the same spec by it, to resume instead of starting over. It
// hashes a canonical form, so reordering stacks, apps or dependsOn entries
// (which changes nothing) keeps the hash.
func specHash(d *dag.DAG, scope string) (string, error) {
	h := sha256.New()
	if err := canonicalJSON(h, scope, canonical(d.Platform)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// canonicalJSON writes json.Marshal(struct{Scope; Platform}) of c to w,
// exactly, but app by app: encoding/json keeps the buffer of its largest
// value for reuse, and a platform of 10,000 apps is 8 MB of JSON that
// would then stay for the whole compile. The platform is encoded with one
// placeholder stack, whose text is replaced by the stacks, each encoded
// with one placeholder app replaced by its apps.
func canonicalJSON(w io.Writer, scope string, c *spec.Platform) error {
	type hashed struct {
		Scope    string
		Platform *spec.Platform
	}
	if c.Spec.Stacks == nil { // null, not a list
		return writeJSON(w, hashed{scope, c})
	}
	skel := *c
	skel.Spec.Stacks = []spec.Stack{{Name: hashPlaceholder}}
	return spliced(w, hashed{scope, &skel}, spec.Stack{Name: hashPlaceholder}, len(c.Spec.Stacks), func(i int) error {
		s := c.Spec.Stacks[i]
		apps := s.Apps
		if apps == nil {
			return writeJSON(w, s)
		}
		s.Apps = []spec.App{{Name: hashPlaceholder}}
		return spliced(w, s, spec.App{Name: hashPlaceholder}, len(apps), func(j int) error {
			return writeJSON(w, apps[j])
		})
	})
}

// hashPlaceholder names the placeholder stack and app of canonicalJSON.
const hashPlaceholder = "deployctl-hash-placeholder-5e81c0"

// spliced writes v's JSON with the JSON of placeholder (one item of a
// list in v) replaced by n items, written by item(i), comma-separated.
func spliced(w io.Writer, v, placeholder any, n int, item func(int) error) error {
	text, err := json.Marshal(v)
	if err != nil {
		return err
	}
	ph, err := json.Marshal(placeholder)
	if err != nil {
		return err
	}
	at := bytes.Index(text, ph)
	if at < 0 || bytes.Count(text, ph) != 1 {
		return fmt.Errorf("internal: spec hash: no single placeholder in %s", text)
	}
	if _, err := w.Write(text[:at]); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			if _, err := w.Write([]byte{','}); err != nil {
				return err
			}
		}
		if err := item(i); err != nil {
			return err
		}
	}
	_, err = w.Write(text[at+len(ph):])
	return err
}

func writeJSON(w io.Writer, v any) error {
	text, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(text)
	return err
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
