package step

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/argocd"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// The health customizations check (INV-7, docs/requirements.md#inv-7-health-verification-accuracy). A platform's health gate is only
// as good as Argo CD's health assessment: an app whose custom resource has
// no resource.customizations.health.<group>_<kind> in argocd-cm is Healthy
// as soon as the resource exists, so a failing resource would pass. Before
// it creates or syncs anything, sync-and-wait reads Argo CD's settings (one
// GET /api/v1/settings, which serves the resource overrides argocd-server
// loaded from argocd-cm) and refuses to go on unless every health script the
// platform relies on is there with the content the compiler generated.
//
// The compiler passes the requirements to every sync-and-wait node as
// HEALTH_CUSTOMIZATION (a workflow parameter of the deploy template), one
// HealthRequirement per line, so `argo submit` by hand and the executor's
// runs are checked alike, without a pod of their own.

// healthDigestPrefix starts the digest of a requirement.
const healthDigestPrefix = "sha256:"

// HealthRequirement is one value of --health-customization:
// "KEY=sha256:HEX", KEY being Argo CD's resource override key ("GROUP/KIND",
// "KIND" for the core group) and HEX the SHA-256 of the health Lua without
// trailing white space (which Lua ignores, and YAML block styles differ in).
func HealthRequirement(overrideKey, lua string) string {
	return overrideKey + "=" + healthDigest(lua)
}

func healthDigest(lua string) string {
	sum := sha256.Sum256([]byte(strings.TrimRight(lua, " \t\r\n")))
	return healthDigestPrefix + hex.EncodeToString(sum[:])
}

// HealthCustomizationKey is the argocd-cm key of a resource override key.
func HealthCustomizationKey(overrideKey string) string {
	return "resource.customizations.health." + strings.Replace(overrideKey, "/", "_", 1)
}

type healthRequirement struct{ key, digest string }

func parseHealthRequirements(values []string) ([]healthRequirement, error) {
	out := make([]healthRequirement, 0, len(values))
	for _, v := range values {
		i := strings.LastIndex(v, "=")
		if i <= 0 || !strings.HasPrefix(v[i+1:], healthDigestPrefix) || len(v[i+1:]) != len(healthDigestPrefix)+2*sha256.Size {
			return nil, fail(exitcode.Invalid, "--health-customization %q: want GROUP/KIND=sha256:HEX", v)
		}
		out = append(out, healthRequirement{key: v[:i], digest: v[i+1:]})
	}
	return out, nil
}

// checkHealthCustomizations fails, before anything changes, when Argo CD
// lacks a required health customization or has another script under its
// key. Transient API faults are retried like every other request, for at
// most the sync timeout.
func (r *runner) checkHealthCustomizations(ctx context.Context, o stepcontract.SyncAndWait) error {
	reqs, err := parseHealthRequirements(o.HealthCustomizations)
	if err != nil || len(reqs) == 0 {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.SyncTimeout)
	defer cancel()
	var s *argocd.Settings
	err = r.call(ctx, "get Argo CD settings", func(ctx context.Context) (err error) {
		s, err = r.c.Settings(ctx)
		return err
	})
	if err != nil {
		return err
	}
	var missing, differ []string
	for _, q := range reqs {
		o, ok := s.ResourceOverrides[q.key]
		switch {
		case !ok || strings.TrimSpace(o.HealthLua) == "":
			missing = append(missing, HealthCustomizationKey(q.key))
		case healthDigest(o.HealthLua) != q.digest:
			differ = append(differ, HealthCustomizationKey(q.key))
		}
	}
	if len(missing)+len(differ) == 0 {
		r.log("Argo CD has the %d health customizations the platform relies on", len(reqs))
		return nil
	}
	sort.Strings(missing)
	sort.Strings(differ)
	var what []string
	if len(missing) > 0 {
		what = append(what, "missing "+strings.Join(missing, ", "))
	}
	if len(differ) > 0 {
		what = append(what, "not the generated script: "+strings.Join(differ, ", "))
	}
	return fail(exitcode.Failure, "refused before any sync: Argo CD's argocd-cm lacks health customizations this platform relies on (without them a failing resource counts as Healthy: deployctl docs/requirements.md#inv-7-health-verification-accuracy): %s. "+
		"Apply rbac/ of the platform's generated folder server-side as its README's \"Run it\" says (it merges these keys into argocd-cm), "+
		"or run deployctl deploy, which applies them; then deploy again", strings.Join(what, "; "))
}
