package executor

import (
	"fmt"
	"net"
	"strings"

	"github.com/deployctl/deployctl/internal/safeyaml"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/report"
	"github.com/deployctl/deployctl/pkg/spec"
)

// applyEnvironment lets environment.yaml override the spec where they
// overlap, before anything is compiled (so the spec hash covers the
// effective values, and a run under other settings is never resumed):
//
//   - argocdNamespace replaces spec.argocd.namespace (where Applications and
//     the argocd-cm / argocd-rbac-cm partials live). When spec.argocd.server
//     is the in-cluster Service name SVC.NAMESPACE.svc[.cluster.local][:PORT]
//     of the old namespace, its namespace part is replaced too.
//   - workflowsNamespace replaces spec.workflow.namespace (WorkflowTemplates,
//     Workflows, the service account, the Argo CD token Secret).
//   - timeouts.sync / timeouts.health replace spec.defaults.timeouts, field
//     by field: every app that does not set that timeout itself takes it;
//     an app's own timeout (a known slow app) still wins.
//   - retries.maxAttempts (first attempt included: limit = maxAttempts-1) and
//     retries.backoff replace spec.defaults.retry.limit / .backoff the same
//     way: apps with their own retry.limit / retry.backoff keep them.
//
// specData is the spec file's text: after loading, an app's settings are
// merged with the defaults, so whether an app set a field itself is read
// from the text. It returns one line per change made.
func applyEnvironment(d *dag.DAG, specData []byte, env *report.EnvironmentFile) ([]string, error) {
	own, err := ownSettings(specData)
	if err != nil {
		return nil, err
	}
	p := d.Platform
	var notes []string
	note := func(field, from, to, src string) {
		if from != to {
			notes = append(notes, fmt.Sprintf("%s: %s → %s (environment.yaml %s)", field, orNone(from), to, src))
		}
	}
	if ns := env.ArgoCDNamespace; ns != "" && ns != p.Spec.ArgoCD.Namespace {
		old := p.Spec.ArgoCD.Namespace
		note("spec.argocd.namespace", old, ns, "argocdNamespace")
		p.Spec.ArgoCD.Namespace = ns
		if s, ok := replaceServiceNamespace(p.Spec.ArgoCD.Server, old, ns); ok {
			note("spec.argocd.server", p.Spec.ArgoCD.Server, s, "argocdNamespace")
			p.Spec.ArgoCD.Server = s
		}
	}
	if ns := env.WorkflowsNamespace; ns != "" {
		note("spec.workflow.namespace", p.Spec.Workflow.Namespace, ns, "workflowsNamespace")
		p.Spec.Workflow.Namespace = ns
	}

	type field struct {
		yamlName string // as in environment.yaml
		specName string // as in the spec
		set      bool   // environment.yaml sets it
		text     string
		apply    func(a *spec.App)
		defaults func()
	}
	fields := []field{
		{"timeouts.sync", "timeouts.sync", env.Timeouts.Sync > 0, env.Timeouts.Sync.String(),
			func(a *spec.App) { a.Timeouts.Sync = spec.Duration{Duration: env.Timeouts.Sync} },
			func() { defaultTimeouts(p).Sync = spec.Duration{Duration: env.Timeouts.Sync} }},
		{"timeouts.health", "timeouts.health", env.Timeouts.Health > 0, env.Timeouts.Health.String(),
			func(a *spec.App) { a.Timeouts.Health = spec.Duration{Duration: env.Timeouts.Health} },
			func() { defaultTimeouts(p).Health = spec.Duration{Duration: env.Timeouts.Health} }},
		{"retries.maxAttempts", "retry.limit", env.Retries.MaxAttempts > 0, fmt.Sprint(env.Retries.MaxAttempts - 1),
			func(a *spec.App) { a.Retry.Limit = env.Retries.MaxAttempts - 1 },
			func() { defaultRetry(p).Limit = env.Retries.MaxAttempts - 1 }},
		{"retries.backoff", "retry.backoff", env.Retries.Backoff > 0, env.Retries.Backoff.String(),
			func(a *spec.App) { a.Retry.Backoff = spec.Duration{Duration: env.Retries.Backoff} },
			func() { defaultRetry(p).Backoff = spec.Duration{Duration: env.Retries.Backoff} }},
	}
	for _, f := range fields {
		if !f.set {
			continue
		}
		f.defaults()
		var kept []string
		for i := range p.Spec.Stacks {
			for j := range p.Spec.Stacks[i].Apps {
				a := &p.Spec.Stacks[i].Apps[j]
				if own[a.Name+"."+f.specName] {
					kept = append(kept, a.Name)
					continue
				}
				f.apply(a)
			}
		}
		msg := fmt.Sprintf("spec.defaults.%s = %s for every app (environment.yaml %s)", f.specName, f.text, f.yamlName)
		if len(kept) > 0 {
			msg += fmt.Sprintf("; kept their own: %s", strings.Join(kept, ", "))
		}
		notes = append(notes, msg)
	}
	return notes, nil
}

func orNone(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

func defaultTimeouts(p *spec.Platform) *spec.Timeouts {
	if p.Spec.Defaults.Timeouts == nil {
		t := spec.DefaultTimeouts
		p.Spec.Defaults.Timeouts = &t
	}
	return p.Spec.Defaults.Timeouts
}

func defaultRetry(p *spec.Platform) *spec.Retry {
	if p.Spec.Defaults.Retry == nil {
		r := spec.DefaultRetry
		p.Spec.Defaults.Retry = &r
	}
	return p.Spec.Defaults.Retry
}

// ownSettings lists "APP.timeouts.sync", "APP.retry.limit", … for every
// field an app sets itself in the spec text.
func ownSettings(specData []byte) (map[string]bool, error) {
	var raw struct {
		Spec struct {
			Stacks []struct {
				Apps []struct {
					Name     string         `json:"name"`
					Timeouts map[string]any `json:"timeouts"`
					Retry    map[string]any `json:"retry"`
				} `json:"apps"`
			} `json:"stacks"`
		} `json:"spec"`
	}
	if err := safeyaml.UnmarshalJSON(specData, &raw); err != nil {
		return nil, err
	}
	own := map[string]bool{}
	for _, s := range raw.Spec.Stacks {
		for _, a := range s.Apps {
			for k := range a.Timeouts {
				own[a.Name+".timeouts."+k] = true
			}
			for k := range a.Retry {
				own[a.Name+".retry."+k] = true
			}
		}
	}
	return own, nil
}

// replaceServiceNamespace rewrites SVC.OLD.svc[.cluster.local][:PORT] to
// SVC.NEW.svc…; anything else is not an in-cluster name of that namespace.
func replaceServiceNamespace(server, old, ns string) (string, bool) {
	host, port, err := net.SplitHostPort(server)
	if err != nil {
		host, port = server, ""
	}
	parts := strings.Split(host, ".")
	if len(parts) < 3 || parts[1] != old || parts[2] != "svc" {
		return server, false
	}
	parts[1] = ns
	host = strings.Join(parts, ".")
	if port != "" {
		return net.JoinHostPort(host, port), true
	}
	return host, true
}
