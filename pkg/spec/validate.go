package spec

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// maxSuggestions bounds the "did you mean" searches of one file.
const maxSuggestions = 100

// ReservedPrefix starts the names of deployctl's own workflow nodes.
const ReservedPrefix = "deployctl-"

// validate checks what the schema cannot: names unique across the file,
// dependencies that resolve, positive durations, sane retry bounds, sources
// that are complete once defaults apply. Cycles are the DAG's business
// (package dag); everything here is local to a field or a name.
func (d *Document) validate() error {
	p := d.Platform
	var errs Errors
	add := func(path, format string, args ...any) { errs = append(errs, d.At(path, format, args...)) }

	// Every name once, across stacks and apps: they become task names.
	type def struct {
		kind, path string
	}
	names := map[string]def{}
	declare := func(name, kind, path string) {
		if name == "" {
			return // missing: the schema says so
		}
		if strings.HasPrefix(name, ReservedPrefix) {
			add(path+".name", "%q: names starting with %q are reserved for deployctl's own workflow nodes", name, ReservedPrefix)
		}
		if prev, ok := names[name]; ok {
			add(path+".name", "duplicate name %q: already used by the %s at line %d (names are unique across stacks and apps)", name, prev.kind, d.Line(prev.path+".name"))
			return
		}
		names[name] = def{kind, path}
	}
	for i, s := range p.Spec.Stacks {
		declare(s.Name, "stack", fmt.Sprintf("spec.stacks[%d]", i))
		for j, a := range s.Apps {
			declare(a.Name, "app", fmt.Sprintf("spec.stacks[%d].apps[%d]", i, j))
		}
	}
	var appNames, stackNames []string
	for n, df := range names {
		if df.kind == "app" {
			appNames = append(appNames, n)
		} else {
			stackNames = append(stackNames, n)
		}
	}
	sort.Strings(appNames)
	sort.Strings(stackNames)

	// dependsOn resolves to the right kind, once, not to itself. A typo
	// gets a suggestion; a file of thousands of unknown names gets them
	// for the first maxSuggestions only (each costs a pass over every name).
	suggested := 0
	checkDeps := func(path, self string, deps []string, want string, candidates []string) {
		seen := map[string]bool{}
		for k, dep := range deps {
			at := fmt.Sprintf("%s.dependsOn[%d]", path, k)
			df, ok := names[dep]
			switch {
			case dep == self:
				add(at, "%s %q depends on itself", want, self)
			case !ok:
				hint := ""
				if suggested++; suggested <= maxSuggestions {
					if c := closest(dep, candidates); c != "" {
						hint = fmt.Sprintf(" (did you mean %q?)", c)
					}
				}
				add(at, "unknown %s %q%s", want, dep, hint)
			case df.kind != want:
				add(at, "%q is a %s, not a%s %s: %s", dep, df.kind, article(want), want, depKindHint(want))
			case seen[dep]:
				add(at, "%q is listed twice", dep)
			}
			seen[dep] = true
		}
	}
	for i, s := range p.Spec.Stacks {
		sp := fmt.Sprintf("spec.stacks[%d]", i)
		checkDeps(sp, s.Name, s.DependsOn, "stack", stackNames)
		for j, a := range s.Apps {
			ap := fmt.Sprintf("%s.apps[%d]", sp, j)
			checkDeps(ap, a.Name, a.DependsOn, "app", appNames)
			d.checkApp(&errs, ap, &a)
		}
	}

	d.checkReceivers(&errs)
	d.checkTimeouts(&errs, "spec.defaults.timeouts", p.Spec.Defaults.Timeouts)
	d.checkRetry(&errs, "spec.defaults.retry", p.Spec.Defaults.Retry)
	d.checkSyncPolicy(&errs, "spec.defaults.syncPolicy", p.Spec.Defaults.SyncPolicy)
	d.checkProgression(&errs, "spec.defaults.retry", mergeRetry(p.Spec.Defaults.Retry, nil))

	seenKinds := map[string]int{}
	for i, h := range p.Spec.HealthCustomizations {
		k := h.Group + "/" + h.Kind
		if prev, ok := seenKinds[k]; ok {
			add(fmt.Sprintf("spec.healthCustomizations[%d]", i), "duplicate health customization for %s (also at line %d)", k, d.Line(fmt.Sprintf("spec.healthCustomizations[%d]", prev)))
		}
		seenKinds[k] = i
	}
	return errs.OrNil()
}

func article(kind string) string {
	if kind == "app" {
		return "n"
	}
	return ""
}

func depKindHint(want string) string {
	if want == "app" {
		return "an app's dependsOn names apps; to wait for a whole stack, put dependsOn on the app's stack"
	}
	return "a stack's dependsOn names stacks; to wait for one app, put dependsOn on the apps that need it"
}

// checkApp validates one app with the defaults it will inherit.
func (d *Document) checkApp(errs *Errors, path string, a *App) {
	add := func(p, format string, args ...any) { *errs = append(*errs, d.At(p, format, args...)) }
	def := d.Platform.Spec.Defaults
	if a.Source != nil && len(a.Sources) > 0 {
		add(path+".sources", "set either source or sources, not both")
	}
	if len(a.Sources) > 0 {
		for k, s := range a.Sources {
			d.checkSource(errs, fmt.Sprintf("%s.sources[%d]", path, k), mergeSource(def.Source, &s), true)
		}
	} else {
		src := mergeSource(def.Source, a.Source)
		d.checkSource(errs, path+".source", src, false)
	}
	d.checkTimeouts(errs, path+".timeouts", a.Timeouts)
	d.checkRetry(errs, path+".retry", a.Retry)
	d.checkArgoCDFields(errs, path, a)
	for k, h := range a.HealthChecks {
		// The values' own rules are checkReceivers'; these reach a
		// workflow parameter, where Argo would evaluate {{…}}.
		// (group, kind and namespace are DNS names: no braces.)
		if h.HTTP != nil {
			noTemplate(errs, d, fmt.Sprintf("%s.healthChecks[%d].http.url", path, k), h.HTTP.URL)
		}
		if h.Resource != nil {
			noTemplate(errs, d, fmt.Sprintf("%s.healthChecks[%d].resource.name", path, k), h.Resource.Name)
		}
	}
	if a.Retry != nil {
		d.checkProgression(errs, path+".retry", mergeRetry(def.Retry, a.Retry))
	}
}

// checkSource requires a complete source once defaults are merged in.
func (d *Document) checkSource(errs *Errors, path string, s Source, multi bool) {
	add := func(format string, args ...any) { *errs = append(*errs, d.At(path, format, args...)) }
	if s.RepoURL == "" {
		add("no repoURL: set it here or in spec.defaults.source")
	}
	if s.Chart == "" && s.Path == "" && !(multi && s.Ref != "") {
		add("no path or chart: say what to deploy")
	}
	if s.Chart != "" && s.TargetRevision == "" {
		add("chart %q has no targetRevision: pin the chart version", s.Chart)
	}
	if types := s.Types(); len(types) > 1 {
		add("%s: one source renders one way (Argo CD refuses \"multiple application sources defined\"); keep one, or split them into sources", strings.Join(types, " and "))
	}
}

// Types lists the source's rendering options that are set (helm,
// kustomize, directory, plugin): Argo CD's ApplicationSource.ExplicitType
// takes at most one, even an empty one (`helm: {}`).
func (s *Source) Types() []string {
	var out []string
	for _, t := range []struct {
		name string
		set  bool
	}{{"kustomize", s.Kustomize != nil}, {"helm", s.Helm != nil}, {"directory", s.Directory != nil}, {"plugin", s.Plugin != nil}} {
		if t.set {
			out = append(out, t.name)
		}
	}
	return out
}

func (d *Document) checkTimeouts(errs *Errors, path string, t *Timeouts) {
	if t == nil {
		return
	}
	for _, f := range []struct {
		name string
		v    Duration
	}{{"sync", t.Sync}, {"health", t.Health}} {
		switch {
		case f.v.Duration < 0 || (f.v.Duration == 0 && d.has(path+"."+f.name)):
			*errs = append(*errs, d.At(path+"."+f.name, "must be positive"))
		case f.v.Duration > MaxTimeout:
			*errs = append(*errs, d.At(path+"."+f.name, "%s is longer than the maximum %s per timeout", f.v.Duration, MaxTimeout))
		}
	}
}

func (d *Document) checkRetry(errs *Errors, path string, r *Retry) {
	if r == nil {
		return
	}
	add := func(p, format string, args ...any) { *errs = append(*errs, d.At(p, format, args...)) }
	if r.Backoff.Duration < 0 || (r.Backoff.Duration == 0 && d.has(path+".backoff")) {
		add(path+".backoff", "must be positive")
	} else if r.Backoff.Duration > MaxBackoff {
		add(path+".backoff", "backoff %s is over the maximum %s: a stuck node would hide for too long", r.Backoff.Duration, MaxBackoff)
	}
	if r.MaxBackoff.Duration < 0 || (r.MaxBackoff.Duration == 0 && d.has(path+".maxBackoff")) {
		add(path+".maxBackoff", "must be positive")
	}
	if r.MaxBackoff.Duration > 0 && r.Backoff.Duration > r.MaxBackoff.Duration {
		add(path+".maxBackoff", "maxBackoff %s is shorter than backoff %s", r.MaxBackoff.Duration, r.Backoff.Duration)
	}
	if r.MaxBackoff.Duration > MaxBackoff {
		add(path+".maxBackoff", "maxBackoff %s is over the maximum %s: a stuck node would hide for too long", r.MaxBackoff.Duration, MaxBackoff)
	}
}

// noTemplate rejects Argo expression delimiters in text that the compiler
// passes to a workflow verbatim: Argo would try to evaluate it.
func noTemplate(errs *Errors, d *Document, path, v string) {
	if strings.Contains(v, "{{") || strings.Contains(v, "}}") {
		*errs = append(*errs, d.At(path, "must not contain '{{' or '}}' (Argo Workflows expression delimiters)"))
	}
}

// checkProgression keeps the longest retry wait under maxBackoff: Argo
// Workflows 3.6 grows the backoff by factor each retry and cannot cap it, so
// the cap is enforced here, on the effective retry policy of each app.
func (d *Document) checkProgression(errs *Errors, path string, r Retry) {
	if r.Limit < 1 || r.MaxBackoff.Duration <= 0 {
		return
	}
	last := r.Backoff.Duration
	for i := 1; i < r.Limit && last <= r.MaxBackoff.Duration; i++ {
		last *= time.Duration(r.Factor)
	}
	if last > r.MaxBackoff.Duration {
		*errs = append(*errs, d.At(path, "retry backoff grows past maxBackoff %s (limit %d, backoff %s, factor %d); lower limit or factor, or raise maxBackoff", r.MaxBackoff.Duration, r.Limit, r.Backoff.Duration, r.Factor))
	}
}

// has reports whether the field path was written in the file.
func (d *Document) has(path string) bool {
	_, ok := d.lines[path]
	return ok
}
