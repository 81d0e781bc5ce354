package executor

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/deployctl/deployctl/pkg/dag"
	"github.com/deployctl/deployctl/pkg/report"
	"github.com/deployctl/deployctl/pkg/spec"
)

// environmentOverrides are environment.yaml's timeouts and retries as a
// layer of the spec's loading (spec.Override): each replaces its
// spec.defaults field before the defaults are merged and the rules run, so
// it meets the spec's own limits (a timeout of at most 168h, retry.limit at
// most 20, backoff under maxBackoff) and an error names environment.yaml's
// line. Every app that does not set the field itself takes it through the
// ordinary merge; an app's own value (a known slow app) still wins.
//   - timeouts.sync / timeouts.health → spec.defaults.timeouts.sync / .health
//   - retries.maxAttempts (first attempt included) → spec.defaults.retry.limit = maxAttempts-1
//   - retries.backoff → spec.defaults.retry.backoff
func environmentOverrides(env *report.EnvironmentFile, file string, lines map[string]int) []spec.Override {
	var over []spec.Override
	add := func(field, path string, set bool, value any) {
		if set {
			over = append(over, spec.Override{Path: path, Value: value, File: file, Line: lines[field], Field: field})
		}
	}
	add("timeouts.sync", "spec.defaults.timeouts.sync", env.Timeouts.Sync > 0, env.Timeouts.Sync.String())
	add("timeouts.health", "spec.defaults.timeouts.health", env.Timeouts.Health > 0, env.Timeouts.Health.String())
	add("retries.maxAttempts", "spec.defaults.retry.limit", env.Retries.MaxAttempts > 0, json.Number(strconv.Itoa(env.Retries.MaxAttempts-1)))
	add("retries.backoff", "spec.defaults.retry.backoff", env.Retries.Backoff > 0, env.Retries.Backoff.String())
	return over
}

// overrideNotes says, one line per override, what it set and which apps
// kept their own value: known from the loaded document, which tells a
// value the spec text sets from one an override set.
func overrideNotes(d *dag.DAG, over []spec.Override) []string {
	var notes []string
	p, doc := d.Platform, d.Doc()
	for _, o := range over {
		field := strings.TrimPrefix(o.Path, "spec.defaults.")
		var kept []string
		for i := range p.Spec.Stacks {
			for j, a := range p.Spec.Stacks[i].Apps {
				if doc.Sets(fmt.Sprintf("spec.stacks[%d].apps[%d].%s", i, j, field)) {
					kept = append(kept, a.Name)
				}
			}
		}
		msg := fmt.Sprintf("spec.defaults.%s = %v for every app (environment.yaml %s)", field, o.Value, o.Field)
		if len(kept) > 0 {
			msg += fmt.Sprintf("; kept their own: %s", strings.Join(kept, ", "))
		}
		notes = append(notes, msg)
	}
	return notes
}

// applyEnvironment lets environment.yaml's namespaces replace the spec's,
// before anything is compiled (so the spec hash covers the effective
// values, and a run under other settings is never resumed). Both are
// checked in readEnvironment by the spec's own rule (a DNS-1123 label).
//
//   - argocdNamespace replaces spec.argocd.namespace (where Applications and
//     the argocd-cm / argocd-rbac-cm partials live). When spec.argocd.server
//     is the in-cluster Service name SVC.NAMESPACE.svc[.cluster.local][:PORT]
//     of the old namespace, its namespace part is replaced too.
//   - workflowsNamespace replaces spec.workflow.namespace (WorkflowTemplates,
//     Workflows, the service account, the Argo CD token Secret).
//
// It returns one line per change made.
func applyEnvironment(d *dag.DAG, env *report.EnvironmentFile) []string {
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
	return notes
}

func orNone(s string) string {
	if s == "" {
		return `""`
	}
	return s
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
