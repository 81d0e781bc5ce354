package spec

import (
	"strings"
	"testing"
)

const argoFieldsSpec = `apiVersion: deployctl.dev/v1alpha1
kind: Platform
metadata: {name: p}
spec:
  argocd: {namespace: argocd, server: "argocd-server.argocd.svc:443"}
  workflow: {namespace: argo, serviceAccount: deployctl, image: "r/deploystep:1"}
  defaults:
    syncPolicy:
      managedNamespaceMetadata:
        labels: {pod-security.kubernetes.io/enforce: "privileged!"}
  stacks:
    - name: s
      apps:
        - name: a
          source:
            repoURL: https://git.example.com/p.git
            path: a
            kustomize:
              patches:
                - {path: p.yaml, patch: "- op: remove"}
                - target: {kind: Deployment}
          destination: {namespace: a}
          syncPolicy:
            automated: {prune: true, allowEmpty: true}
            retry: {limit: 5, backoff: {duration: 5 seconds, factor: 2, maxDuration: "180"}}
            managedNamespaceMetadata:
              labels: {-team: web}
              annotations: {"a/b/c": x}
          info:
            - {name: owner}
`

// The Argo CD fields are checked by Argo CD's and Kubernetes' rules, every
// problem at its line: label keys and values, annotation keys, Argo CD's
// durations (seconds or a Go duration: "180" is fine), Kustomize patches.
func TestArgoCDFieldsValidated(t *testing.T) {
	_, err := Load("p.yaml", []byte(argoFieldsSpec))
	want := `p.yaml:10: spec.defaults.syncPolicy.managedNamespaceMetadata.labels.pod-security.kubernetes.io/enforce: label pod-security.kubernetes.io/enforce: value "privileged!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')
p.yaml:20: spec.stacks[0].apps[0].source.kustomize.patches[0]: set either path or patch, not both: Kustomize refuses both
p.yaml:21: spec.stacks[0].apps[0].source.kustomize.patches[1]: set path (a patch file) or patch (inline): Kustomize needs one
p.yaml:25: spec.stacks[0].apps[0].syncPolicy.retry.backoff.duration: does not match pattern '^([0-9]+|([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$'
p.yaml:27: spec.stacks[0].apps[0].syncPolicy.managedNamespaceMetadata.labels.-team: label key "-team": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')
p.yaml:28: spec.stacks[0].apps[0].syncPolicy.managedNamespaceMetadata.annotations.a/b/c: annotation key "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')
p.yaml:30: spec.stacks[0].apps[0].info[0]: missing required field "value"`
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}

	// Fixed, it loads: "180" is Argo CD's 180 seconds.
	fixed := strings.NewReplacer(`"privileged!"`, "privileged", "patch: \"- op: remove\"", "target: {kind: Service}",
		"- target: {kind: Deployment}", "- {patch: \"- op: remove\\n  path: /spec/replicas\", target: {kind: Deployment}}",
		"5 seconds", "5s", "-team", "team", `"a/b/c"`, "example.com/team", "{name: owner}", "{name: owner, value: web-team}").Replace(argoFieldsSpec)
	d, err := Load("p.yaml", []byte(fixed))
	if err != nil {
		t.Fatalf("%v\n%s", err, fixed)
	}
	a := d.Platform.Spec.Stacks[0].Apps[0]
	if r := a.SyncPolicy.Retry; r.Limit != 5 || r.Backoff.MaxDuration != "180" || *r.Backoff.Factor != 2 || !a.SyncPolicy.Automated.AllowEmpty {
		t.Errorf("syncPolicy %+v", a.SyncPolicy)
	}
}
