package appread

// V3 is what Argo CD 3 adds to an Application that the linked argo-cd v2
// type (Manifest.App) has no place for, decoded from the same JSON, with
// Argo CD 3.6's names and types (pkg/apis/application/v1alpha1): a value of
// another type is refused at its line, as Argo CD's CRD refuses it.
type V3 struct {
	Spec struct {
		Source     *V3Source     `json:"source,omitempty"`
		Sources    []V3Source    `json:"sources,omitempty"`
		SyncPolicy *V3SyncPolicy `json:"syncPolicy,omitempty"`
	} `json:"spec"`
}

// V3Source is a source's Argo CD 3 fields.
type V3Source struct {
	TagPrefix string `json:"tagPrefix,omitempty"`
	Kustomize *struct {
		IgnoreMissingComponents bool `json:"ignoreMissingComponents,omitempty"`
		LabelIncludeTemplates   bool `json:"labelIncludeTemplates,omitempty"`
	} `json:"kustomize,omitempty"`
	Directory *struct {
		DisableExtensionFilter bool `json:"disableExtensionFilter,omitempty"`
	} `json:"directory,omitempty"`
}

// V3SyncPolicy is a sync policy's Argo CD 3 fields.
type V3SyncPolicy struct {
	Automated *struct {
		// Enabled false: automated sync off, its options kept.
		Enabled *bool `json:"enabled,omitempty"`
	} `json:"automated,omitempty"`
	Retry *struct {
		Refresh bool `json:"refresh,omitempty"`
	} `json:"retry,omitempty"`
}

// Source is the Argo CD 3 fields of source i of SourcesOf's list (the
// sources, or the one source), zero when it has none.
func (v *V3) Source(i int) V3Source {
	switch {
	case v == nil:
	case len(v.Spec.Sources) > 0:
		if i < len(v.Spec.Sources) {
			return v.Spec.Sources[i]
		}
	case v.Spec.Source != nil && i == 0:
		return *v.Spec.Source
	}
	return V3Source{}
}

// AnyExtension: directory.disableExtensionFilter, Argo CD 3.6's switch
// that renders every file include and exclude select, not only manifests'
// extensions.
func (s V3Source) AnyExtension() bool {
	return s.Directory != nil && s.Directory.DisableExtensionFilter
}

// AutomationOff: spec.syncPolicy.automated.enabled is false.
func (v *V3) AutomationOff() bool {
	if v == nil || v.Spec.SyncPolicy == nil || v.Spec.SyncPolicy.Automated == nil {
		return false
	}
	e := v.Spec.SyncPolicy.Automated.Enabled
	return e != nil && !*e
}

// Enabled is spec.syncPolicy.automated.enabled, nil when not set.
func (v *V3) Enabled() *bool {
	if v == nil || v.Spec.SyncPolicy == nil || v.Spec.SyncPolicy.Automated == nil {
		return nil
	}
	return v.Spec.SyncPolicy.Automated.Enabled
}

// RetryRefresh is spec.syncPolicy.retry.refresh.
func (v *V3) RetryRefresh() bool {
	return v != nil && v.Spec.SyncPolicy != nil && v.Spec.SyncPolicy.Retry != nil && v.Spec.SyncPolicy.Retry.Refresh
}

// set: some Argo CD 3 field has a value.
func (v *V3) set() bool {
	for _, s := range append(v.Spec.Sources, v.Source(0)) {
		if s.TagPrefix != "" || (s.Kustomize != nil && (s.Kustomize.IgnoreMissingComponents || s.Kustomize.LabelIncludeTemplates)) ||
			(s.Directory != nil && s.Directory.DisableExtensionFilter) {
			return true
		}
	}
	return v.Enabled() != nil || v.RetryRefresh()
}
