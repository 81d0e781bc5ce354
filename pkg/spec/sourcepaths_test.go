package spec

import (
	"strings"
	"testing"
)

const pathSpec = oneStack + `        - name: a
          source:
            repoURL: https://git.example.com/p.git
            path: apps/a
            kustomize:
              patches:
                - {path: PATCH, target: {kind: Deployment}}
          destination: {namespace: a}
        - name: b
          source:
            repoURL: https://git.example.com/p.git
            path: apps/b
            helm:
              valueFiles: [VALUES]
          destination: {namespace: b}
`

// Path fields of a source follow source.path's rule: relative, never out
// of the repository (Kustomize: of the kustomization's folder).
func TestSourcePathFields(t *testing.T) {
	for _, c := range []struct {
		patch, values, err string
	}{
		{"p.yaml", "values.yaml", ""},
		{"patches/p.yaml", "../shared/values.yaml", ""},
		{"p.yaml", "/env/prod.yaml", ""},
		{"p.yaml", "https://example.com/v.yaml", ""},
		{"p.yaml", "$values/v.yaml", ""},
		{"/etc/passwd", "values.yaml", `p.yaml:15: spec.stacks[0].apps[0].source.kustomize.patches[0].path: "/etc/passwd" must be a relative path inside the kustomization's folder`},
		{"../../../outside.yaml", "values.yaml", `p.yaml:15: spec.stacks[0].apps[0].source.kustomize.patches[0].path: "../../../outside.yaml" must be a relative path`},
		{"p.yaml", "../../../outside.yaml", `p.yaml:22: spec.stacks[0].apps[1].source.helm.valueFiles[0]: "../../../outside.yaml" resolves outside the repository`},
		{"p.yaml", "/../etc/passwd", `p.yaml:22: spec.stacks[0].apps[1].source.helm.valueFiles[0]: "/../etc/passwd" resolves outside the repository`},
	} {
		s := strings.NewReplacer("PATCH", `"`+c.patch+`"`, "VALUES", `"`+c.values+`"`).Replace(pathSpec)
		_, err := Load("p.yaml", []byte(s))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s %s: refused: %v", c.patch, c.values, err)
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("%s %s: got %v\nwant %s", c.patch, c.values, err, c.err)
		}
	}
}
