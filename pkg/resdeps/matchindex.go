package resdeps

import (
	"slices"

	"k8s.io/apimachinery/pkg/labels"
)

// matchIndex holds the provisions of one key that Match (admission
// webhooks), so that a consumer object is asked about only those that can
// accept it: by API group; in classes of alike provisions (Class); for a
// rule with Sig, once per kind of object (Sig: all Match reads but the
// labels) and then, per object, only the classes with a label selector —
// a class that takes any labels counts the kind's objects in bulk. Asking
// every object of every webhook took 40 s for 3,000 webhooks and 3,000
// ConfigMaps.
type matchIndex struct {
	all   []provider             // in the order provided: what bruteForce asks
	named map[string]*matchClass // rule and Class → its class
	// Classes asked per object, and classes asked per kind (rule with
	// Sig), each by group: those naming the group, and those of any group
	// ("*", or not indexed).
	plain, kinded groupIndex
	rules         []*Rule // the rules of kinded

	// For the app being read (reset): its kinds of objects by rule and Sig,
	// and its matches by class, in the order first met.
	kinds   map[*Rule]map[string]*kindOf
	matches map[*matchClass]*hits
	order   []*hits
}

type groupIndex struct {
	byGroup map[string][]*matchClass
	any     []*matchClass
}

func (g *groupIndex) add(c *matchClass, groups []string) {
	if groups == nil || contains(groups, "*") {
		g.any = append(g.any, c)
		return
	}
	if g.byGroup == nil {
		g.byGroup = map[string][]*matchClass{}
	}
	for _, gr := range groups {
		g.byGroup[gr] = append(g.byGroup[gr], c)
	}
}

// of are the classes that may accept an object of group, in two disjoint
// lists.
func (g *groupIndex) of(group string) [2][]*matchClass {
	return [2][]*matchClass{g.byGroup[group], g.any}
}

// matchClass is provisions that accept the same objects.
type matchClass struct {
	rule      *Rule
	match     func(*Context, Object) bool
	unlabeled func(*Context, Object) bool
	labels    labels.Selector
	providers []provider
}

// kindOf is the objects of one Sig: the classes that accept them whatever
// their labels (counted here), those that look at labels, the first object
// and how many.
type kindOf struct {
	anyLabels, labelled []*matchClass
	o                   Object
	idx, n              int
}

// hits is one class's matches in the app being read: the first object
// (its index in the app) and how many.
type hits struct {
	c      *matchClass
	o      Object
	idx, n int
}

func (ix *matchIndex) add(r *Rule, pv provider) {
	ix.all = append(ix.all, pv)
	if ix.named == nil {
		ix.named = map[string]*matchClass{}
	}
	name := r.Name + "\x00" + pv.p.Class
	if c := ix.named[name]; c != nil && pv.p.Class != "" {
		c.providers = append(c.providers, pv)
		return
	}
	c := &matchClass{rule: r, match: pv.p.Match, providers: []provider{pv}}
	ix.named[name] = c
	if r.Sig == nil || pv.p.Unlabelled == nil || pv.p.Labels == nil {
		ix.plain.add(c, pv.p.Groups)
		return
	}
	c.unlabeled, c.labels = pv.p.Unlabelled, pv.p.Labels
	ix.kinded.add(c, pv.p.Groups)
	if !slices.Contains(ix.rules, r) {
		ix.rules = append(ix.rules, r)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// reset starts an app.
func (ix *matchIndex) reset() {
	ix.kinds, ix.matches, ix.order = map[*Rule]map[string]*kindOf{}, map[*matchClass]*hits{}, nil
}

// see records which classes accept o, the app's idx-th object.
func (ix *matchIndex) see(x *Context, o Object, idx int) {
	for _, list := range ix.plain.of(o.Group()) {
		for _, c := range list {
			if c.match(x, o) {
				ix.hit(c, o, idx, 1)
			}
		}
	}
	for _, r := range ix.rules {
		ix.seeKind(x, r, r.Sig(x, o), o, idx)
	}
}

// seeKind counts o among the objects of its Sig, finding on the first
// which classes of the rule accept them, and asks the label selectors of
// the others.
func (ix *matchIndex) seeKind(x *Context, r *Rule, sig string, o Object, idx int) {
	if ix.kinds[r] == nil {
		ix.kinds[r] = map[string]*kindOf{}
	}
	k := ix.kinds[r][sig]
	if k == nil {
		k = &kindOf{o: o, idx: idx}
		ix.kinds[r][sig] = k
		for _, list := range ix.kinded.of(o.Group()) {
			for _, c := range list {
				if c.rule != r || !c.unlabeled(x, o) {
					continue
				}
				if c.labels.Empty() {
					k.anyLabels = append(k.anyLabels, c)
				} else {
					k.labelled = append(k.labelled, c)
				}
			}
		}
	}
	k.n++
	if len(k.labelled) > 0 {
		set := labels.Set(o.Labels())
		for _, c := range k.labelled {
			if c.labels.Matches(set) {
				ix.hit(c, o, idx, 1)
			}
		}
	}
}

// hit adds n matches of class c, the first at object idx.
func (ix *matchIndex) hit(c *matchClass, o Object, idx, n int) {
	h := ix.matches[c]
	if h == nil {
		h = &hits{c: c, o: o, idx: idx}
		ix.matches[c] = h
		ix.order = append(ix.order, h)
	}
	if idx < h.idx {
		h.o, h.idx = o, idx
	}
	h.n += n
}

// done ends an app: its matches, the bulk counts included.
func (ix *matchIndex) done() []*hits {
	for _, byKind := range ix.kinds {
		for _, k := range byKind {
			for _, c := range k.anyLabels {
				ix.hit(c, k.o, k.idx, k.n)
			}
		}
	}
	return ix.order
}
