package preflight

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/report"
	"github.com/deployctl/deployctl/pkg/spec"
)

// testedLines are the release lines deployctl's e2e runs the whole scenario
// on (README, "Support matrix"; test/e2e version sets), with the release
// tested. Preflight warns on any other line: it may work, nobody proved it.
var testedLines = map[string]map[string]string{
	"Argo CD":        {"v3.0": "v3.0.23", "v3.6": "v3.6.1"},
	"Argo Workflows": {"v3.7": "v3.7.18", "v4.0": "v4.0.7"},
}

// untestedWhy adds what is known about an untested line.
var untestedWhy = map[string]map[string]string{
	"Argo Workflows": {"v3.6": "a plain `argo retry` hangs there (argoproj/argo-workflows#14796): resume with `deployctl deploy`"},
}

// imageVersion is the tag of the first container whose image repository
// ends in /name (quay.io/argoproj/argocd:v3.6.1 → v3.6.1), "" when no pod
// runs such an image or its tag is no version (latest, a digest only).
func imageVersion(pods []corev1.Pod, name string) string {
	for _, p := range pods {
		for _, c := range p.Spec.Containers {
			img := c.Image
			if i := strings.Index(img, "@"); i >= 0 {
				img = img[:i]
			}
			i := strings.LastIndex(img, ":")
			if i < 0 || strings.Contains(img[i:], "/") {
				continue
			}
			repo, tag := img[:i], img[i+1:]
			if (repo == name || strings.HasSuffix(repo, "/"+name)) && strings.HasPrefix(tag, "v") && strings.Count(tag, ".") >= 1 {
				return tag
			}
		}
	}
	return ""
}

// support says whether product's version is on a tested line: ok, and a
// note for the preflight reason.
func support(product, version string) (ok bool, note string) {
	if version == "" {
		return true, product + " version unknown (no pod runs its image)"
	}
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	line := "v" + parts[0]
	if len(parts) > 1 {
		line += "." + parts[1]
	}
	if tested, found := testedLines[product][line]; found {
		return true, fmt.Sprintf("%s %s (line %s tested with %s)", product, version, line, tested)
	}
	var lines []string
	for l, v := range testedLines[product] {
		lines = append(lines, v+" ("+l+")")
	}
	slices.Sort(lines)
	note = fmt.Sprintf("%s %s is untested: deployctl's e2e runs %s", product, version, strings.Join(lines, ", "))
	if why := untestedWhy[product][line]; why != "" {
		note += "; " + why
	}
	return false, note
}

// noteSupport adds a passing check's version note; an untested version
// turns it into a warning that leads with the note.
func noteSupport(c *report.Check, product, version string) {
	if tested, note := support(product, version); tested {
		c.Reason += "; " + note
	} else {
		c.Status, c.Reason = report.Warn, note+"; "+c.Reason
	}
}

// newerFields judges the Argo CD 3 fields the platform's apps use against
// the Argo CD release (version, "" when unknown): one it does not know is
// a failure (it would drop it without a word: the app would deploy
// otherwise than the spec says), an unknown release a warning.
func newerFields(c *report.Check, p *spec.Platform, version string) {
	apps := map[string][]string{} // "path (since+)" → apps
	var keys []string
	for _, st := range p.Spec.Stacks {
		for i := range st.Apps {
			for _, f := range st.Apps[i].NewerArgoCDFields() {
				if knows, ok := spec.Knows(version, f.Since); ok && knows {
					continue
				}
				k := fmt.Sprintf("%s (%s+)", f.Path, f.Since)
				if apps[k] == nil {
					keys = append(keys, k)
				}
				if l := apps[k]; len(l) == 0 || l[len(l)-1] != st.Apps[i].Name {
					apps[k] = append(l, st.Apps[i].Name)
				}
			}
		}
	}
	if len(keys) == 0 {
		return
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+": "+strings.Join(apps[k], ", "))
	}
	const drops = "an Argo CD without them drops them without a word (its API decodes the Application into its own type; the API server prunes what the CRD does not have): `automated: {enabled: false}` becomes an automated sync"
	if _, ok := spec.Knows(version, "v3.0"); !ok {
		if c.Status == report.Pass {
			c.Status = report.Warn
		}
		c.Reason = fmt.Sprintf("the Argo CD release is unknown and the apps use fields of newer ones (%s); %s; %s", strings.Join(parts, "; "), drops, c.Reason)
		return
	}
	c.Status, c.Code = report.Fail, exitcode.Invalid
	c.Reason = fmt.Sprintf("Argo CD %s does not know fields the apps use (%s): %s. Upgrade Argo CD, or take them out of the spec; %s",
		version, strings.Join(parts, "; "), drops, c.Reason)
}
