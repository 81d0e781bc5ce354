package spec

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deployctl/deployctl/internal/readlimit"
)

// base is a valid spec with a placeholder for the part under test.
const base = `apiVersion: deployctl.dev/v1alpha1
kind: Platform
metadata: {name: p}
spec:
  workflow: {image: example.com/deploystep:1}
  defaults:
    source: {repoURL: https://git.example.com/p.git, targetRevision: main}
  stacks:
  - name: s
    apps:
    - name: a
      source: {path: apps/a}
`

// messages loads src and returns its error lines.
func messages(t *testing.T, src string) []string {
	t.Helper()
	_, err := Load("t.yaml", []byte(src))
	if err == nil {
		return nil
	}
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("not located errors: %v", err)
	}
	return strings.Split(err.Error(), "\n")
}

func TestReceiverRules(t *testing.T) {
	for _, tc := range []struct {
		name, add string
		want      []string
	}{
		{"rbac newline in project", "      project: \"default, allow\\ng, deployctl, role:admin\"\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].project: "default, allow\ng, deployctl, role:admin" is not a valid Argo CD project name`}},
		{"rbac wildcard project", "      project: '*'\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].project: "*" is not a valid Argo CD project name`}},
		{"reserved label", "      labels: {deployctl.dev/platform: x}\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].labels.deployctl.dev/platform: label "deployctl.dev/platform" is reserved: deployctl sets it on what it generates and finds its objects by it`}},
		{"managed-by label", "      labels:\n        app.kubernetes.io/managed-by: helm\n",
			[]string{`t.yaml:14: spec.stacks[0].apps[0].labels.app.kubernetes.io/managed-by: label "app.kubernetes.io/managed-by" is reserved: deployctl sets it on what it generates and finds its objects by it`}},
		{"reserved annotation", "      annotations: {deployctl.dev/platform: x}\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].annotations.deployctl.dev/platform: annotation "deployctl.dev/platform" is reserved for deployctl`}},
		{"import's wave annotation is allowed", "      annotations: {deployctl.dev/sync-wave: \"-1\"}\n", nil},
		{"check line injection", "      healthChecks:\n      - resource: {kind: Secret, name: \"a\\nb\"}\n",
			[]string{`t.yaml:14: spec.stacks[0].apps[0].healthChecks[0].resource.name: "a\nb" is not a valid Kubernetes object name: must not contain whitespace or control characters`}},
		{"check name with an Argo expression", "      healthChecks:\n      - resource: {kind: Secret, name: \"{{workflow.name}}\"}\n",
			[]string{`t.yaml:14: spec.stacks[0].apps[0].healthChecks[0].resource.name: must not contain '{{' or '}}' (Argo Workflows expression delimiters)`}},
		{"http check newline", "      healthChecks:\n      - http: {url: \"http://x.y/z\\nhttp://a=200\"}\n",
			[]string{`t.yaml:14: spec.stacks[0].apps[0].healthChecks[0].http.url: "http://x.y/z\nhttp://a=200" must not contain whitespace or control characters`}},
		{"careless: uppercase project", "      project: Platform\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].project: "Platform" is not a valid Argo CD project name (a DNS-1123 subdomain, as Argo CD's IsValidProjectName)`}},
		{"careless: label value too long", "      labels: {team: " + strings.Repeat("x", 64) + "}\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].labels.team: label value "` + strings.Repeat("x", 64) + `" is not valid: must be no more than 63 characters`}},
		{"annotations over 256 KiB", "      annotations: {a: " + strings.Repeat("x", 256<<10) + "}\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].annotations: annotations total more than 262144 bytes (Kubernetes' limit)`}},
		{"careless: namespace with capitals", "      destination: {namespace: Vault}\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].destination.namespace: "Vault" is not a valid namespace name`}},
		{"careless: application namespace with capitals", "      applicationNamespace: Team-A\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].applicationNamespace: "Team-A" is not a valid namespace name`}},
		{"attacker: application namespace with a policy line", "      applicationNamespace: \"a, allow\\ng, deployctl, role:admin\"\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].applicationNamespace: "a, allow\ng, deployctl, role:admin" is not a valid namespace name`}},
		{"application namespace longer than a label", "      applicationNamespace: " + strings.Repeat("n", 64) + "\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].applicationNamespace: "` + strings.Repeat("n", 64) + `" is not a valid namespace name`}},
		{"application namespace", "      applicationNamespace: team-a\n", nil},
		{"server and name", "      destination: {server: https://k.example.com, name: prod}\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].destination: set either server or name, not both`}},
		{"path out of the repository", "    - {name: b, source: {path: ../other-repo}}\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[1].source.path: "../other-repo" must be a relative path inside the repository`}},
		{"absolute path", "    - {name: b, source: {path: /etc}}\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[1].source.path: "/etc" must be a relative path inside the repository`}},
		{"duplicate multi-source ref", "      sources: [{path: a, ref: v}, {path: b, ref: v}]\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].sources: set either source or sources, not both`,
				`t.yaml:13: spec.stacks[0].apps[0].sources[1].ref: ref "v" is already used by sources[0]: Argo CD needs each ref once`}},
		{"argocd server with a template", "  argocd: {server: \"{{x}}:443\"}\n",
			[]string{`t.yaml:13: spec.argocd.server: host "{{x}}" is neither a DNS name nor an IP address`}},
		// Issue 23: Argo CD's documented wildcards were refused. Group and
		// kind are Argo CD globs, and nothing in an entry is refused by
		// Argo CD (its CRD: strings, kind present).
		{"ignoreDifferences wildcards", "      ignoreDifferences:\n      - {group: '*', kind: '*', managedFieldsManagers: [kube-controller-manager]}\n" +
			"      - {group: 'apps*', kind: 'Deploy*', namespace: '*', jsonPointers: [spec/replicas]}\n      - {kind: ''}\n", nil},
		{"duplicate source name", "    - {name: b, sources: [{path: a, name: x}, {path: b, name: x}]}\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[1].sources[1].name: name "x" is already used by sources[0]: Argo CD refuses an Application with two sources of one name`}},
		{"kustomize namespace and common annotations", "    - {name: b, source: {path: b, kustomize: {namespace: Team, commonAnnotations: {-x: y}}}}\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[1].source.kustomize.commonAnnotations.-x: annotation key "-x" is not valid`,
				`t.yaml:13: spec.stacks[0].apps[1].source.kustomize.namespace: "Team" is not a valid namespace name`}},
		{"timeout over a week", "      timeouts: {sync: 2562047h}\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].timeouts.sync: 2562047h0m0s is longer than the maximum 168h0m0s per timeout`}},
		{"timeout overflowing Go", "      timeouts: {health: 9999999999999h}\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].timeouts.health: duration out of range: at most 168h0m0s for a timeout, 1h0m0s for a backoff`}},
		{"backoff over an hour", "      retry: {limit: 1, backoff: 61m, maxBackoff: 1h}\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].retry: retry backoff grows past maxBackoff 1h0m0s (limit 1, backoff 1h1m0s, factor 2)`,
				`t.yaml:13: spec.stacks[0].apps[0].retry.backoff: backoff 1h1m0s is over the maximum 1h0m0s: a stuck node would hide for too long`,
				`t.yaml:13: spec.stacks[0].apps[0].retry.maxBackoff: maxBackoff 1h0m0s is shorter than backoff 1h1m0s`}},
		{"duplicate key", "      source: {path: apps/b}\n",
			[]string{`t.yaml:13: spec.stacks[0].apps[0].source: duplicate key "source": already set at line 12; keep one`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(t, base+tc.add)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d errors, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("error %d:\n got: %s\nwant: %s…", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestGenerateChecksInLint: what the generators (health, events,
// bootstrap) refuse, the spec's validation refuses first, with a line.
func TestGenerateChecksInLint(t *testing.T) {
	for _, tc := range []struct{ name, add, want string }{
		{"lua", "  healthCustomizations:\n  - {kind: Widget, lua: \"hs = {\"}\n",
			"t.yaml:14: spec.healthCustomizations[0].lua: Lua does not compile: at the end of the script: syntax error"},
		{"group", "  healthCustomizations:\n  - {group: Example.COM, kind: Widget, lua: \"return {}\"}\n",
			`t.yaml:14: spec.healthCustomizations[0].group: group "Example.COM" is not a DNS subdomain`},
		{"kind", "  healthCustomizations:\n  - {kind: my_kind, lua: \"return {}\"}\n",
			`t.yaml:14: spec.healthCustomizations[0].kind: kind "my_kind" must be letters and digits, starting with a letter`},
		{"cron", "  events: {validateSchedule: \"61 * * * *\"}\n",
			`t.yaml:13: spec.events.validateSchedule: schedule "61 * * * *" does not parse: end of range (61) above maximum (59): 61`},
		{"endpoint", "  events: {webhook: {endpoint: /a/manual}}\n",
			`t.yaml:13: spec.events.webhook.endpoint: "/a/manual" must not end in /manual (the manual trigger's endpoint)`},
		{"branch", "  events: {webhook: {branch: \"a..b\"}}\n",
			`t.yaml:13: spec.events.webhook.branch: "a..b" is not a Git branch name: must not contain "..", "@{" or "//"`},
		{"webhook secret with a dot", "  events: {webhook: {authSecret: {name: hook.token}}}\n",
			`t.yaml:13: spec.events.webhook.authSecret.name: does not match pattern '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'`},
		{"webhook secret too long", "  events: {webhook: {authSecret: {name: " + strings.Repeat("a", MaxWebhookSecretName+1) + "}}}\n",
			`t.yaml:13: spec.events.webhook.authSecret.name: "` + strings.Repeat("a", MaxWebhookSecretName+1) + `" is longer than 56 characters: Argo Events mounts it as the volume "secret-`},
		{"webhook secret key", "  events: {webhook: {authSecret: {name: hook, key: \"a:b\"}}}\n",
			`t.yaml:13: spec.events.webhook.authSecret.key: does not match pattern '^[-._a-zA-Z0-9]+$'`},
		{"chart repo jinja", "  bootstrap:\n    charts:\n      argocd: {repo: \"https://x.y/{{ lookup('env','HOME') }}\", chart: argo-cd, version: 1.0.0}\n      argoWorkflows: {repo: https://x.y, chart: a, version: 1.0.0}\n      argoEvents: {repo: https://x.y, chart: a, version: 1.0.0}\n      sealedSecrets: {repo: https://x.y, chart: a, version: 1.0.0}\n",
			`t.yaml:15: spec.bootstrap.charts.argocd.repo: "https://x.y/{{ lookup('env','HOME') }}" contains Jinja delimiters, which Ansible would evaluate`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(t, base+tc.add)
			if len(got) == 0 || !strings.HasPrefix(got[0], tc.want) {
				t.Errorf("got:\n%s\nwant first: %s…", strings.Join(got, "\n"), tc.want)
			}
		})
	}
}

func TestPlatformNameFitsTheCronWorkflow(t *testing.T) {
	long := strings.Repeat("a", MaxPlatformName+1)
	got := messages(t, strings.Replace(base, "name: p}", "name: "+long+"}", 1))
	want := `t.yaml:3: metadata.name: "` + long + `" is longer than 43 characters: it names the CronWorkflow "` + long + `-validate", and Argo Workflows allows 52`
	if len(got) != 1 || got[0] != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := messages(t, strings.Replace(base, "name: p}", "name: "+long[1:]+"}", 1)); got != nil {
		t.Errorf("a %d-character name refused: %q", MaxPlatformName, got)
	}
}

// TestDeadlineFitsKubernetes: the longest step deadline the compiler can
// compute (sync + health + 2m slack, each timeout at its maximum) fits
// activeDeadlineSeconds, which Kubernetes bounds to 2^31-1 seconds.
func TestDeadlineFitsKubernetes(t *testing.T) {
	if worst := 2*MaxTimeout + 2*time.Minute; worst.Seconds() > math.MaxInt32 {
		t.Fatalf("worst deadline %s is over Kubernetes' activeDeadlineSeconds bound", worst)
	}
}

func TestBytesAreLocated(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"nul", "apiVersion: x\nkind: \x00\n", "t.yaml:2:7: invalid YAML: NUL byte (U+0000) is not allowed"},
		{"utf8", "a: b\n  c: \xff\n", "t.yaml:2:6: invalid YAML: invalid UTF-8 (byte 0xff): a spec must be UTF-8 text"},
		{"control", "a: \x1b[31m\n", "t.yaml:1:4: invalid YAML: control character U+001B is not allowed"},
		{"depth flow", "a:\n  b: " + strings.Repeat("[", 10001), "t.yaml:2:10006: invalid YAML: exceeded max depth of 10000 (nested collections)"},
		{"depth block", strings.Repeat("- ", 10001) + "x\n", "t.yaml:1:10001: invalid YAML: exceeded max depth of 10000 (nested collections)"},
		// yaml.v3 leaves out line 1, where this flow sequence begins.
		{"first line", "a: [\n", "t.yaml:1: invalid YAML: did not find expected node content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(t, tc.src)
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestReadIsBounded(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(readlimit.Spec + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	if _, err := Read(big); !readlimit.IsTooLarge(err) || err.Error() != big+": larger than the 16 MiB limit" {
		t.Errorf("%s: %v", big, err)
	}
	// A device is no spec: refused by its type, not read up to the limit.
	if _, err := Read("/dev/zero"); !readlimit.IsNotRegular(err) || err.Error() != "/dev/zero: not a regular file (a device)" {
		t.Errorf("/dev/zero: %v", err)
	}
}

// TestDefaultsOfAStandardInstall: spec.argocd may be left out, and
// spec.workflow may say only the image.
func TestDefaultsOfAStandardInstall(t *testing.T) {
	d, err := Load("t.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	s := d.Platform.Spec
	if s.ArgoCD.Namespace != "argocd" || s.ArgoCD.Server != "argocd-server.argocd.svc:443" || s.ArgoCD.Project != "default" ||
		s.Workflow.Namespace != "argo" || s.Workflow.ServiceAccount != "deployctl" {
		t.Errorf("defaults: %+v %+v", s.ArgoCD, s.Workflow)
	}
	d, err = Load("t.yaml", []byte(strings.Replace(base, "  workflow:", "  argocd: {namespace: gitops}\n  workflow:", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Platform.Spec.ArgoCD.Server; got != "argocd-server.gitops.svc:443" {
		t.Errorf("server in namespace gitops: %s", got)
	}
}

// TestPartialDocument: with errors, LoadPartial still returns what parsed,
// and the errors of a missing required field do not hide the rest.
func TestPartialDocument(t *testing.T) {
	src := strings.Replace(base, "  workflow: {image: example.com/deploystep:1}\n", "  workflow: {namespace: argo}\n", 1) +
		"      dependsOn: [b]\n"
	d, err := LoadPartial("t.yaml", []byte(src))
	if d == nil || d.Platform.Spec.Stacks[0].Apps[0].Name != "a" {
		t.Fatalf("no partial document: %v", d)
	}
	want := "t.yaml:5: spec.workflow: missing required field \"image\"\nt.yaml:13: spec.stacks[0].apps[0].dependsOn[0]: unknown app \"b\""
	if err == nil || err.Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", err, want)
	}
	if d, err := Load("t.yaml", []byte(src)); d != nil || err == nil {
		t.Errorf("Load returned a document with errors")
	}
}

// The webhook's auth Secret: defaults when unset or partly set, the spec's
// values otherwise; the longest name Argo Events can mount is accepted.
func TestWebhookAuthSecret(t *testing.T) {
	def := SecretKeyRef{Name: DefaultWebhookSecret, Key: DefaultWebhookKey}
	for _, tc := range []struct {
		name string
		ev   *Events
		want SecretKeyRef
	}{
		{"no events", nil, def},
		{"no webhook", &Events{}, def},
		{"no secret", &Events{Webhook: &Webhook{Port: 1}}, def},
		{"name only", &Events{Webhook: &Webhook{AuthSecret: &SecretKeyRef{Name: "hook"}}}, SecretKeyRef{Name: "hook", Key: DefaultWebhookKey}},
		{"both", &Events{Webhook: &Webhook{AuthSecret: &SecretKeyRef{Name: "hook", Key: "k"}}}, SecretKeyRef{Name: "hook", Key: "k"}},
	} {
		if got := tc.ev.WebhookAuthSecret(); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	long := strings.Repeat("a", MaxWebhookSecretName)
	if got := messages(t, base+"  events: {webhook: {authSecret: {name: "+long+", key: token}}}\n"); got != nil {
		t.Errorf("a %d-character webhook Secret name refused: %q", MaxWebhookSecretName, got)
	}
	if err := CheckWebhookSecretName(DefaultWebhookSecret); err != nil {
		t.Errorf("the default name is refused: %v", err)
	}
}
