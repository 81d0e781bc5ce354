package preflight

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/deployctl/deployctl/pkg/report"
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
