package spec

import "time"

// Built-in defaults, used where neither the app nor spec.defaults says.
// Timeouts follow RFC 3.8.5 (docs/requirements.md#rfc-385-default-timeouts: "simple deployment: 5 min / 5 min");
// retry: 3 attempts, 10s backoff doubling up to 5 min.
var (
	DefaultTimeouts = Timeouts{Sync: Duration{5 * time.Minute}, Health: Duration{5 * time.Minute}}
	DefaultRetry    = Retry{Limit: 3, Backoff: Duration{10 * time.Second}, Factor: 2, MaxBackoff: Duration{5 * time.Minute}}
)

// A standard install: the argo-cd chart (and Argo CD's install.yaml) in
// namespace argocd, its API at argocd-server.<namespace>.svc:443, the
// built-in project default; Argo Workflows' quick start and chart in
// namespace argo. spec.argocd and spec.workflow only need to say what
// differs. The workflows' ServiceAccount is generated (rbac/), so it needs
// no install to exist.
const (
	DefaultArgoCDNamespace   = "argocd"
	DefaultWorkflowNamespace = "argo"
	DefaultServiceAccount    = "deployctl"
)

// DefaultArgoCDServer is argocd-server's in-cluster address in a namespace.
func DefaultArgoCDServer(namespace string) string {
	return "argocd-server." + namespace + ".svc:443"
}

const (
	DefaultProject         = "default"
	DefaultServer          = "https://kubernetes.default.svc"
	DefaultTokenSecret     = "deployctl-argocd-token"
	DefaultTokenKey        = "token"
	DefaultParallelism     = 10
	DefaultImagePullPolicy = "IfNotPresent"
)

// DefaultWebhookSecret and DefaultWebhookKey hold the bearer token of the
// Argo Events webhook endpoints (spec.events.webhook.authSecret).
const (
	DefaultWebhookSecret = "deployctl-webhook-token"
	DefaultWebhookKey    = "token"
)

// normalize fills every app with its effective settings (app, then
// spec.defaults, then built-ins), so the compiler reads one place. It runs
// only on a document that passed validation.
func (p *Platform) normalize() {
	s := &p.Spec
	if s.ArgoCD.Namespace == "" {
		s.ArgoCD.Namespace = DefaultArgoCDNamespace
	}
	if s.ArgoCD.Server == "" {
		s.ArgoCD.Server = DefaultArgoCDServer(s.ArgoCD.Namespace)
	}
	if s.Workflow.Namespace == "" {
		s.Workflow.Namespace = DefaultWorkflowNamespace
	}
	if s.Workflow.ServiceAccount == "" {
		s.Workflow.ServiceAccount = DefaultServiceAccount
	}
	if s.ArgoCD.Project == "" {
		s.ArgoCD.Project = DefaultProject
	}
	if s.ArgoCD.TokenSecret.Name == "" {
		s.ArgoCD.TokenSecret.Name = DefaultTokenSecret
	}
	if s.ArgoCD.TokenSecret.Key == "" {
		s.ArgoCD.TokenSecret.Key = DefaultTokenKey
	}
	if s.Workflow.Parallelism == 0 {
		s.Workflow.Parallelism = DefaultParallelism
	}
	if s.Workflow.ImagePullPolicy == "" {
		s.Workflow.ImagePullPolicy = DefaultImagePullPolicy
	}
	d := s.Defaults
	for i := range s.Stacks {
		for j := range s.Stacks[i].Apps {
			a := &s.Stacks[i].Apps[j]
			if a.Project == "" {
				a.Project = s.ArgoCD.Project
			}
			if len(a.Sources) > 0 {
				for k := range a.Sources {
					a.Sources[k] = mergeSource(d.Source, &a.Sources[k])
				}
			} else {
				src := mergeSource(d.Source, a.Source)
				a.Source = &src
			}
			dst := mergeDestination(d.Destination, a.Destination)
			a.Destination = &dst
			if a.SyncOptions == nil {
				a.SyncOptions = append([]string(nil), d.SyncOptions...)
			}
			if a.SyncPolicy == nil && d.SyncPolicy != nil {
				sp := *d.SyncPolicy
				a.SyncPolicy = &sp
			}
			t := mergeTimeouts(d.Timeouts, a.Timeouts)
			a.Timeouts = &t
			r := mergeRetry(d.Retry, a.Retry)
			a.Retry = &r
		}
	}
}

// mergeSource overlays an app's source on the default source field by field.
func mergeSource(def, own *Source) Source {
	var s Source
	if def != nil {
		s = *def
	}
	if own == nil {
		return s
	}
	if own.RepoURL != "" {
		s.RepoURL = own.RepoURL
	}
	if own.TargetRevision != "" {
		s.TargetRevision = own.TargetRevision
	}
	if own.Path != "" || own.Chart != "" {
		s.Path, s.Chart = own.Path, own.Chart
	}
	if own.Ref != "" {
		s.Ref = own.Ref
	}
	if own.Helm != nil {
		s.Helm = own.Helm
	}
	if own.Kustomize != nil {
		s.Kustomize = own.Kustomize
	}
	if own.Directory != nil {
		s.Directory = own.Directory
	}
	if own.Plugin != nil {
		s.Plugin = own.Plugin
	}
	if own.Name != "" {
		s.Name = own.Name
	}
	if own.TagPrefix != "" {
		s.TagPrefix = own.TagPrefix
	}
	return s
}

func mergeDestination(def, own *Destination) Destination {
	var d Destination
	if def != nil {
		d = *def
	}
	if own != nil {
		if own.Server != "" || own.Name != "" {
			d.Server, d.Name = own.Server, own.Name
		}
		if own.Namespace != "" {
			d.Namespace = own.Namespace
		}
	}
	if d.Server == "" && d.Name == "" {
		d.Server = DefaultServer
	}
	return d
}

// AppTimeouts are the timeouts of an app that sets none of its own:
// spec.defaults.timeouts over the built-in ones.
func (d Defaults) AppTimeouts() Timeouts { return mergeTimeouts(d.Timeouts, nil) }

func mergeTimeouts(def, own *Timeouts) Timeouts {
	t := DefaultTimeouts
	for _, o := range []*Timeouts{def, own} {
		if o == nil {
			continue
		}
		if o.Sync.Duration > 0 {
			t.Sync = o.Sync
		}
		if o.Health.Duration > 0 {
			t.Health = o.Health
		}
	}
	return t
}

// AppRetry is the retry policy of an app that sets none of its own:
// spec.defaults.retry over the built-in one.
func (d Defaults) AppRetry() Retry { return mergeRetry(d.Retry, nil) }

func mergeRetry(def, own *Retry) Retry {
	r := DefaultRetry
	for _, o := range []*Retry{def, own} {
		if o == nil {
			continue
		}
		r.Limit = o.Limit
		if o.Backoff.Duration > 0 {
			r.Backoff = o.Backoff
		}
		if o.Factor > 0 {
			r.Factor = o.Factor
		}
		if o.MaxBackoff.Duration > 0 {
			r.MaxBackoff = o.MaxBackoff
		}
	}
	return r
}
