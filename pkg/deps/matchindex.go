package deps

// matchIndex holds the provisions of one key that Match (admission
// webhooks), so that a consumer object is asked about only those that can
// accept it: by API group, then once per class of alike provisions and
// per alike object (Rule.Sig). Asking every object of every webhook took
// 40 s for 3,000 webhooks and 3,000 ConfigMaps.
type matchIndex struct {
	all     []provider // in the order provided: what bruteForce asks
	classes []*matchClass
	named   map[string]*matchClass   // rule and Class → its class
	byGroup map[string][]*matchClass // group → the classes naming it
	any     []*matchClass            // classes of any group ("*", or not indexed)
}

// matchClass is provisions that accept the same objects.
type matchClass struct {
	id        int
	rule      *Rule
	match     func(*Context, Object) bool
	providers []provider
	// seen memoises match per Sig, for the app being read (an object's
	// namespace may be its app's): reset by Infer for each app.
	seen map[string]bool
}

func (ix *matchIndex) add(r *Rule, pv provider) {
	ix.all = append(ix.all, pv)
	if ix.named == nil {
		ix.named, ix.byGroup = map[string]*matchClass{}, map[string][]*matchClass{}
	}
	name := r.Name + "\x00" + pv.p.Class
	if c := ix.named[name]; c != nil && pv.p.Class != "" {
		c.providers = append(c.providers, pv)
		return
	}
	c := &matchClass{id: len(ix.classes), rule: r, match: pv.p.Match, providers: []provider{pv}, seen: map[string]bool{}}
	ix.classes = append(ix.classes, c)
	ix.named[name] = c
	if pv.p.Groups == nil || contains(pv.p.Groups, "*") {
		ix.any = append(ix.any, c)
		return
	}
	for _, g := range pv.p.Groups {
		ix.byGroup[g] = append(ix.byGroup[g], c)
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

// candidates are the classes that may accept o, in two disjoint lists.
func (ix *matchIndex) candidates(o Object) [2][]*matchClass {
	if ix == nil {
		return [2][]*matchClass{}
	}
	return [2][]*matchClass{ix.byGroup[o.Group()], ix.any}
}

// accepts asks c about o, once per Sig (sigs: o's, by rule) for the app
// being read.
func (c *matchClass) accepts(x *Context, o Object, sigs map[*Rule]string) bool {
	if c.rule.Sig == nil || c.seen == nil {
		return c.match(x, o)
	}
	s, ok := sigs[c.rule]
	if !ok {
		s = c.rule.Sig(x, o)
		sigs[c.rule] = s
	}
	if v, ok := c.seen[s]; ok {
		return v
	}
	v := c.match(x, o)
	c.seen[s] = v
	return v
}
