package resdeps

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

// Context is what the rules may know beyond one object: the app it is
// read for and what the whole inventory says of kinds and namespaces.
type Context struct {
	app      *App
	crds     map[string]crd               // group/Kind → its CRD
	nsLabels map[string]map[string]string // namespace → labels of its Namespace object
	services map[string]string            // namespace/name → the app deploying that Service; "" for more than one
	nsSets   map[string]labels.Set        // namespace → namespaceLabels, once made
}

// namespaceLabels are the labels a webhook's namespaceSelector sees: the
// Namespace object's, if an app deploys it, and the name label the API
// server sets on every namespace.
func (x *Context) namespaceLabels(ns string) labels.Set {
	if s, ok := x.nsSets[ns]; ok {
		return s
	}
	out := labels.Set{"kubernetes.io/metadata.name": ns}
	for k, v := range x.nsLabels[ns] {
		out[k] = v
	}
	x.nsSets[ns] = out
	return out
}

func newContext(apps []App) *Context {
	x := &Context{crds: map[string]crd{}, nsLabels: map[string]map[string]string{}, services: map[string]string{}, nsSets: map[string]labels.Set{}}
	for i := range apps {
		for _, o := range apps[i].Objects {
			switch {
			case is(o, "", "Service"):
				ns := o.Namespace()
				if ns == "" {
					ns = apps[i].Namespace
				}
				k := ns + "/" + o.Name()
				if by, seen := x.services[k]; seen && by != apps[i].Name {
					x.services[k] = ""
				} else {
					x.services[k] = apps[i].Name
				}
			case is(o, "apiextensions.k8s.io", "CustomResourceDefinition"):
				g, k := str(o.Obj, "spec", "group"), str(o.Obj, "spec", "names", "kind")
				x.crds[g+"/"+k] = crd{plural: str(o.Obj, "spec", "names", "plural"), namespaced: str(o.Obj, "spec", "scope") != "Cluster"}
			case is(o, "", "Namespace"):
				x.nsLabels[o.Name()] = o.Labels()
			}
		}
	}
	return x
}

// Edge is one inferred dependency: From (the consumer app) needs To.
type Edge struct {
	From, To string
	Evidence []Evidence // sorted by What
}

// Evidence is one reason for an edge.
type Evidence struct {
	What   string // "CRD certificates.cert-manager.io"
	Object string // the first consumer object that needs it: "Certificate cert-manager/ca"
	Where  string // where that object was read
	Count  int    // how many of the consumer's objects need it
}

// Text is the evidence as the spec's comment says it.
func (e Edge) Text() string {
	s := fmt.Sprintf("needs %s from %s", e.Evidence[0].What, e.To)
	if n := len(e.Evidence) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more)", n)
	}
	return s
}

// Short is the edge with its first evidence: "grafana → ceph-storageclasses
// (default StorageClass ceph-block)".
func (e Edge) Short() string {
	return fmt.Sprintf("%s → %s (%s)", e.From, e.To, e.Evidence[0].What)
}

// Conflict is a need more than one other app meets: which one the
// consumer needs is not guessed.
type Conflict struct {
	App, Object, Where string
	What               string   // as the first provider names it
	Providers          []string // sorted
}

func (c Conflict) String() string {
	return fmt.Sprintf("%s: %s (%s) needs %s, deployed by more than one app (%s): no edge inferred; declare the one it needs",
		c.App, c.Object, c.Where, c.What, strings.Join(c.Providers, ", "))
}

// Result is the inferred dependencies of a set of apps.
type Result struct {
	Edges     []Edge     // sorted by From, then To
	Conflicts []Conflict // sorted by App, then What
}

type provider struct {
	app string
	p   Provision
}

// Infer applies Rules to the apps' objects. The same apps give the same
// result in any order.
func Infer(apps []App) *Result { return infer(apps, false) }

// infer is Infer; bruteForce asks every provision that Matches about every
// object, as Infer did before matchIndex (the tests hold one against the
// other).
func infer(apps []App, bruteForce bool) *Result {
	apps = append([]App(nil), apps...)
	sort.SliceStable(apps, func(i, j int) bool { return apps[i].Name < apps[j].Name })
	for i := range apps {
		var synced []Object
		for _, o := range apps[i].Objects {
			if o.Synced() {
				synced = append(synced, o)
			}
		}
		apps[i].Objects = synced
	}
	x := newContext(apps)

	unique := map[string][]provider{}    // key → one provision per app, apps sorted
	matching := map[string]*matchIndex{} // key → every provision with Match
	own := map[string]map[string]bool{}  // app → keys it provides itself
	for i := range apps {
		a := &apps[i]
		x.app = a
		own[a.Name] = map[string]bool{}
		if a.CreatesNamespace && a.Namespace != "" {
			own[a.Name][key("namespace", a.Namespace)] = true
		}
		for _, o := range a.Objects {
			for ri := range Rules {
				r := &Rules[ri]
				for _, p := range r.Provides(x, o) {
					if p.Match != nil {
						by := a.Name
						if p.By != "" {
							by = p.By
						}
						if matching[p.Key] == nil {
							matching[p.Key] = &matchIndex{}
						}
						matching[p.Key].add(r, provider{by, p})
						continue
					}
					if !own[a.Name][p.Key] {
						own[a.Name][p.Key] = true
						unique[p.Key] = append(unique[p.Key], provider{a.Name, p})
					}
				}
			}
		}
	}

	type pair struct{ from, to string }
	evidence := map[pair]map[string]*Evidence{}
	first := map[*Evidence]int{} // the index, in its app, of the evidence's object
	add := func(from, to, what string, o Object, idx, n int) {
		pr := pair{from, to}
		if evidence[pr] == nil {
			evidence[pr] = map[string]*Evidence{}
		}
		if e := evidence[pr][what]; e != nil {
			e.Count += n
			if idx < first[e] { // the first object that needs it
				e.Object, e.Where, first[e] = o.String(), o.Where(), idx
			}
			return
		}
		e := &Evidence{What: what, Object: o.String(), Where: o.Where(), Count: n}
		evidence[pr][what], first[e] = e, idx
	}
	conflicts := map[pair]*Conflict{} // (app, key)
	for i := range apps {
		a := &apps[i]
		x.app = a
		for _, ix := range matching {
			ix.reset()
		}
		for oi, o := range a.Objects {
			for _, r := range Rules {
				for _, k := range r.Needs(x, o) {
					if bruteForce && matching[k] != nil {
						for _, pv := range matching[k].all {
							if pv.app != a.Name && pv.p.Match(x, o) {
								add(a.Name, pv.app, pv.p.What, o, oi, 1)
							}
						}
					}
					if !bruteForce && matching[k] != nil {
						matching[k].see(x, o, oi)
					}
					if own[a.Name][k] {
						continue
					}
					switch ps := unique[k]; len(ps) {
					case 0:
					case 1:
						add(a.Name, ps[0].app, ps[0].p.What, o, oi, 1)
					default:
						if conflicts[pair{a.Name, k}] == nil {
							c := &Conflict{App: a.Name, Object: o.String(), Where: o.Where(), What: ps[0].p.What}
							for _, p := range ps {
								c.Providers = append(c.Providers, p.app)
							}
							conflicts[pair{a.Name, k}] = c
						}
					}
				}
			}
		}
		for _, k := range sortedKeys(matching) {
			for _, h := range matching[k].done() {
				for _, pv := range h.c.providers {
					if pv.app != a.Name {
						add(a.Name, pv.app, pv.p.What, h.o, h.idx, h.n)
					}
				}
			}
		}
	}

	res := &Result{}
	for pr, ev := range evidence {
		e := Edge{From: pr.from, To: pr.to}
		for _, w := range sortedKeys(ev) {
			e.Evidence = append(e.Evidence, *ev[w])
		}
		res.Edges = append(res.Edges, e)
	}
	sort.Slice(res.Edges, func(i, j int) bool {
		if res.Edges[i].From != res.Edges[j].From {
			return res.Edges[i].From < res.Edges[j].From
		}
		return res.Edges[i].To < res.Edges[j].To
	})
	for _, c := range conflicts {
		res.Conflicts = append(res.Conflicts, *c)
	}
	sort.Slice(res.Conflicts, func(i, j int) bool {
		if res.Conflicts[i].App != res.Conflicts[j].App {
			return res.Conflicts[i].App < res.Conflicts[j].App
		}
		if res.Conflicts[i].What != res.Conflicts[j].What {
			return res.Conflicts[i].What < res.Conflicts[j].What
		}
		return res.Conflicts[i].Object < res.Conflicts[j].Object
	})
	return res
}
