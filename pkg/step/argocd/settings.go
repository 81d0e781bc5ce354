package argocd

import (
	"context"
	"net/http"
)

// Settings is the part of GET /api/v1/settings the step reads: the resource
// overrides Argo CD applies (argocd-cm resource.customizations.*), keyed
// "GROUP/KIND", or "KIND" for the core group, the way argo-cd's
// server/settings serves them. argocd-server answers this request for
// anyone (its login page reads it), so no RBAC policy line is needed.
type Settings struct {
	ResourceOverrides map[string]ResourceOverride `json:"resourceOverrides"`
}

// ResourceOverride is one override; HealthLua is the argocd-cm value of
// resource.customizations.health.<group>_<kind>, verbatim.
type ResourceOverride struct {
	HealthLua string `json:"health.lua,omitempty"`
}

// Settings returns Argo CD's settings as argocd-server sees them now.
func (c *Client) Settings(ctx context.Context) (*Settings, error) {
	var s Settings
	if err := c.do(ctx, "get settings", http.MethodGet, "/api/v1/settings", nil, nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}
