package importer

import (
	appv1 "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"

	"github.com/deployctl/deployctl/pkg/importer/appread"

	"github.com/deployctl/deployctl/pkg/spec"
)

// The Application fields the spec mirrors one to one, converted back: the
// sync policy (automated, retry, managed namespace metadata) and spec.info
// (sources convert by their JSON: build.go's source). pkg/compile turns
// them into the same Argo CD fields again, which the round trip checks.

// syncPolicyOf is an Application's sync policy without its sync options
// (the spec keeps those beside it); nil when there is none. Argo CD 3's
// automated.enabled (false: automation off, its options kept) and
// retry.refresh come from the manifest's Argo CD 3 fields (appread.V3).
func syncPolicyOf(m *appread.Manifest) *spec.SyncPolicy {
	a := m.App
	sp := a.Spec.SyncPolicy
	if sp == nil {
		return nil
	}
	out := &spec.SyncPolicy{}
	if at := sp.Automated; at != nil {
		out.Automated = &spec.Automated{Prune: at.Prune, SelfHeal: at.SelfHeal, AllowEmpty: at.AllowEmpty, Enabled: m.V3.Enabled()}
	}
	if r := sp.Retry; r != nil {
		out.Retry = &spec.SyncRetry{Limit: r.Limit, Refresh: m.V3.RetryRefresh()}
		if b := r.Backoff; b != nil {
			out.Retry.Backoff = &spec.SyncBackoff{Duration: b.Duration, Factor: b.Factor, MaxDuration: b.MaxDuration}
		}
	}
	if m := sp.ManagedNamespaceMetadata; m != nil {
		out.ManagedNamespaceMetadata = &spec.ManagedNamespaceMetadata{Labels: m.Labels, Annotations: m.Annotations}
	}
	if *out == (spec.SyncPolicy{}) {
		return nil
	}
	return out
}

func infoOf(a *appv1.Application) []spec.Info {
	var out []spec.Info
	for _, i := range a.Spec.Info {
		out = append(out, spec.Info{Name: i.Name, Value: i.Value})
	}
	return out
}
