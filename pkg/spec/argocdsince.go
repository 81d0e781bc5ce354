package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// ArgoCDField is an Application field an app uses that not every Argo CD
// 3 release knows: its path in the Application and the release line that
// introduced it. An older Argo CD drops it without a word (its API decodes
// the Application into its own Go type, and the API server prunes what the
// CRD's schema does not have), so the app would deploy otherwise than the
// spec says: `automated: {enabled: false}` would be an automated sync.
type ArgoCDField struct {
	Path  string // e.g. spec.sources[1].tagPrefix
	Since string // e.g. v3.5
}

// ArgoCDSince is the release line that introduced each Argo CD 3 field the
// spec models, by its path under an Application's spec (a source's under
// "source"), read from argo-cd's pkg/apis/application/v1alpha1/types.go of
// v3.0.0, v3.1.0 … v3.6.1 (pkg/importer/receiver checks them against the
// CRDs of v3.0.23 and v3.6.1). kustomize's ignoreMissingComponents and
// labelIncludeTemplates are in v3.0.0, the oldest line deployctl supports:
// they need no check.
var ArgoCDSince = map[string]string{
	"source.tagPrefix":                        "v3.5",
	"source.directory.disableExtensionFilter": "v3.6",
	"syncPolicy.automated.enabled":            "v3.1",
	"syncPolicy.retry.refresh":                "v3.2",
}

// NewerArgoCDFields lists the fields of an app (its defaults applied, as
// Load returns it) that an Argo CD older than their release line drops.
func (a *App) NewerArgoCDFields() []ArgoCDField {
	var out []ArgoCDField
	src := func(at string, s *Source) {
		if s == nil {
			return
		}
		if d := s.Directory; d != nil && d.DisableExtensionFilter {
			out = append(out, ArgoCDField{at + ".directory.disableExtensionFilter", ArgoCDSince["source.directory.disableExtensionFilter"]})
		}
		if s.TagPrefix != "" {
			out = append(out, ArgoCDField{at + ".tagPrefix", ArgoCDSince["source.tagPrefix"]})
		}
	}
	if len(a.Sources) > 0 {
		for i := range a.Sources {
			src(fmt.Sprintf("spec.sources[%d]", i), &a.Sources[i])
		}
	} else {
		src("spec.source", a.Source)
	}
	if sp := a.SyncPolicy; sp != nil {
		if sp.Automated != nil && sp.Automated.Enabled != nil {
			out = append(out, ArgoCDField{"spec.syncPolicy.automated.enabled", ArgoCDSince["syncPolicy.automated.enabled"]})
		}
		if sp.Retry != nil && sp.Retry.Refresh {
			out = append(out, ArgoCDField{"spec.syncPolicy.retry.refresh", ArgoCDSince["syncPolicy.retry.refresh"]})
		}
	}
	return out
}

// Knows says whether Argo CD version (v3.4.2, 3.4, v3.6.1+abc) is of line
// since (v3.5) or newer; ok false when version is no version.
func Knows(version, since string) (knows, ok bool) {
	v, vok := releaseLine(version)
	s, sok := releaseLine(since)
	if !vok || !sok {
		return false, false
	}
	return v[0] > s[0] || (v[0] == s[0] && v[1] >= s[1]), true
}

// releaseLine is major and minor of a version.
func releaseLine(v string) ([2]int, bool) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return [2]int{}, false
	}
	var out [2]int
	for i := range out {
		digits := parts[i]
		if j := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
			digits = digits[:j] // 6-rc1, 1+abc
		}
		n, err := strconv.Atoi(digits)
		if err != nil {
			return [2]int{}, false
		}
		out[i] = n
	}
	return out, true
}
