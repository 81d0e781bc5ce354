package bootstrap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/deployctl/deployctl/pkg/healthlua"
	"github.com/deployctl/deployctl/pkg/spec"
)

const reference = "../../examples/reference-platform.yaml"

func load(t *testing.T, path string) *spec.Platform {
	t.Helper()
	p, err := spec.LoadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

func generate(t *testing.T, p *spec.Platform) map[string][]byte {
	t.Helper()
	files, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// expectedLayout is the tree of docs/requirements.md#rfc-621-ansible-bootstrap-standards, plus each Helm role's values file.
func expectedLayout() []string {
	out := []string{
		"ansible.cfg", "requirements.yml", "site.yml",
		"inventories/production/hosts.yml", "inventories/production/group_vars/all.yml",
	}
	for _, r := range Roles {
		out = append(out, "playbooks/"+r+".yml",
			"roles/"+r+"/tasks/main.yml", "roles/"+r+"/defaults/main.yml", "roles/"+r+"/meta/main.yml")
		if r != "gitops-handoff" {
			out = append(out, "roles/"+r+"/files/values.yaml")
		}
	}
	sort.Strings(out)
	return out
}

func TestLayoutIsTheRFCs(t *testing.T) {
	files := generate(t, load(t, reference))
	var got []string
	for name := range files {
		got = append(got, name)
	}
	sort.Strings(got)
	if want := expectedLayout(); !reflect.DeepEqual(got, want) {
		t.Fatalf("layout:\n got %v\nwant %v", got, want)
	}
	for name, b := range files {
		if !strings.HasSuffix(name, ".cfg") {
			var doc any
			if err := yaml.Unmarshal(b, &doc); err != nil {
				t.Errorf("%s is not YAML: %v", name, err)
			}
		}
	}
}

func TestNoBootstrapSectionGeneratesNothing(t *testing.T) {
	files, err := Generate(load(t, "../../examples/minimal.yaml"))
	if err != nil || files != nil {
		t.Fatalf("Generate = %v, %v; want nothing", files, err)
	}
}

func TestDeterministic(t *testing.T) {
	a := generate(t, load(t, reference))
	for i := 0; i < 3; i++ {
		if b := generate(t, load(t, reference)); !reflect.DeepEqual(a, b) {
			t.Fatal("two runs differ")
		}
	}
}

func TestRequirements(t *testing.T) {
	var req struct {
		Collections []struct{ Name, Version string } `yaml:"collections"`
	}
	if err := yaml.Unmarshal(generate(t, load(t, reference))["requirements.yml"], &req); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range req.Collections {
		got[c.Name] = c.Version
	}
	if got["kubernetes.core"] != ">=4.0.0" {
		t.Errorf("kubernetes.core = %q, want >=4.0.0", got["kubernetes.core"])
	}
	for _, c := range []string{"community.general", "ansible.posix", "ansible.utils"} {
		if _, ok := got[c]; !ok {
			t.Errorf("requirements.yml lacks %s", c)
		}
	}
}

// task is one entry of a task list, in document order.
type task struct {
	role    string
	name    string
	module  string
	args    any
	raw     map[string]any
	section string   // block, rescue or always of its innermost block
	parents []string // names of the enclosing blocks
	whens   []string // the when of every enclosing block
}

var taskKeywords = map[string]bool{
	"name": true, "when": true, "register": true, "loop": true, "loop_control": true, "until": true,
	"retries": true, "delay": true, "failed_when": true, "changed_when": true, "no_log": true,
	"check_mode": true, "vars": true, "tags": true, "block": true, "rescue": true, "always": true,
	"notify": true, "environment": true, "delegate_to": true, "run_once": true, "args": true,
	"become": true, "ignore_errors": true, "ignore_unreachable": true, "any_errors_fatal": true,
	"module_defaults": true, "timeout": true, "diff": true, "throttle": true,
}

// walk flattens a task list: blocks first, then their block, rescue and
// always tasks, in document order.
func walk(role string, list []any, parents, whens []string, section string, out *[]task) {
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		when := ""
		if w, ok := m["when"]; ok {
			when = strings.TrimSpace(stringify(w))
		}
		if _, isBlock := m["block"]; isBlock {
			*out = append(*out, task{role: role, name: name, module: "block", raw: m, section: section, parents: parents, whens: whens})
			p2, w2 := append(append([]string{}, parents...), name), append(append([]string{}, whens...), when)
			for _, sec := range []string{"block", "rescue", "always"} {
				if sub, ok := m[sec].([]any); ok {
					walk(role, sub, p2, w2, sec, out)
				}
			}
			continue
		}
		tk := task{role: role, name: name, raw: m, section: section, parents: parents, whens: whens}
		for k, v := range m {
			if !taskKeywords[k] {
				if tk.module != "" {
					tk.module = "AMBIGUOUS:" + tk.module + "," + k
				} else {
					tk.module, tk.args = k, v
				}
			}
		}
		*out = append(*out, tk)
	}
}

func stringify(v any) string {
	b, _ := yaml.Marshal(v)
	return string(b)
}

func roleTasks(t *testing.T, files map[string][]byte, role string) []task {
	t.Helper()
	var list []any
	if err := yaml.Unmarshal(files["roles/"+role+"/tasks/main.yml"], &list); err != nil {
		t.Fatalf("%s: %v", role, err)
	}
	var out []task
	walk(role, list, nil, nil, "", &out)
	return out
}

func phaseOf(name string) int {
	for i, p := range Phases {
		if strings.HasPrefix(name, p+" | ") {
			return i
		}
	}
	return -1
}

// TestSixPhasesInOrder walks every role: each task is named after its phase,
// the phases come in the order of docs/requirements.md#rfc-621-ansible-bootstrap-standards and all six are there; ROLLBACK runs only
// when validation failed; RESULT's status fact is set in an always section.
func TestSixPhasesInOrder(t *testing.T) {
	files := generate(t, load(t, reference))
	for _, role := range Roles {
		t.Run(role, func(t *testing.T) {
			prefix := varName(role)
			seen := map[int]bool{}
			last := 0
			statusInAlways := false
			for _, tk := range roleTasks(t, files, role) {
				if tk.module == "block" {
					if tk.name == "" {
						t.Errorf("unnamed block")
					}
					continue
				}
				ph := phaseOf(tk.name)
				if ph < 0 {
					t.Fatalf("task %q is not named after a phase (%v)", tk.name, Phases)
				}
				if ph < last {
					t.Fatalf("task %q (%s) comes after a %s task", tk.name, Phases[ph], Phases[last])
				}
				last, seen[ph] = ph, true
				switch Phases[ph] {
				case "Rollback":
					if !strings.Contains(strings.Join(tk.whens, " "), prefix+"_validation_failed") {
						t.Errorf("rollback task %q does not depend on %s_validation_failed", tk.name, prefix)
					}
				case "Result":
					if args, ok := tk.args.(map[string]any); ok && tk.module == "ansible.builtin.set_fact" {
						if _, sets := args[prefix+"_status"]; sets && tk.section == "always" {
							statusInAlways = true
						}
					}
				}
			}
			for i, p := range Phases {
				if !seen[i] {
					t.Errorf("phase %s is missing", p)
				}
			}
			if !statusInAlways {
				t.Errorf("%s_status is not set in an always section", prefix)
			}
		})
	}
}

var (
	readOnly = map[string]bool{
		"ansible.builtin.set_fact": true, "ansible.builtin.assert": true, "ansible.builtin.debug": true,
		"kubernetes.core.k8s_info": true, "kubernetes.core.k8s_cluster_info": true, "kubernetes.core.helm_info": true,
		// helm_pull and tempfile touch the controller's scratch space only.
		"kubernetes.core.helm_pull": true, "ansible.builtin.tempfile": true,
	}
	forbiddenModules = regexp.MustCompile(`^(ansible\.builtin\.|ansible\.legacy\.)?(shell|command|raw|script|pause|wait_for|expect)$`)
	forbiddenText    = regexp.MustCompile(`(?i)\bkubectl\b|\bhelm\s+(install|upgrade|rollback|uninstall|delete)\b|\bsleep\b`)
)

// TestPhaseContracts checks what each phase may do.
func TestPhaseContracts(t *testing.T) {
	p := load(t, reference)
	files := generate(t, p)
	for _, role := range Roles {
		t.Run(role, func(t *testing.T) {
			prefix := varName(role)
			defaults := vars(t, files, "roles/"+role+"/defaults/main.yml")
			helmApplies := 0
			for _, tk := range roleTasks(t, files, role) {
				if tk.module == "block" {
					continue
				}
				phase := Phases[phaseOf(tk.name)]
				switch phase {
				case "Pre-check", "Test":
					if readOnly[tk.module] {
						break
					}
					// TEST may diff the cluster against the manifests, dry-run only.
					if phase == "Test" && tk.module == "kubernetes.core.k8s" && tk.raw["check_mode"] == true {
						break
					}
					t.Errorf("%s task %q changes state with %s", phase, tk.name, tk.module)
				case "Apply":
					if role == "gitops-handoff" {
						if tk.module != "kubernetes.core.k8s" && tk.module != "ansible.builtin.set_fact" {
							t.Errorf("apply task %q uses %s", tk.name, tk.module)
						}
						break
					}
					// The rescue of the atomic install records its failure.
					if tk.module == "ansible.builtin.set_fact" && tk.section == "rescue" {
						break
					}
					if tk.module != "kubernetes.core.helm" {
						t.Errorf("apply task %q uses %s, not kubernetes.core.helm", tk.name, tk.module)
						break
					}
					helmApplies++
					args := tk.args.(map[string]any)
					if args["chart_version"] != "{{ "+prefix+"_chart_version }}" {
						t.Errorf("apply installs chart_version %v", args["chart_version"])
					}
					chart := chartOf(p, role)
					if defaults[prefix+"_chart_version"] != chart.Version || !versionRe.MatchString(chart.Version) {
						t.Errorf("%s_chart_version = %v, spec pins %q", prefix, defaults[prefix+"_chart_version"], chart.Version)
					}
				}
				if tk.module == "kubernetes.core.helm" {
					args := tk.args.(map[string]any)
					if args["state"] == "absent" {
						continue
					}
					if v, _ := args["chart_version"].(string); strings.TrimSpace(v) == "" {
						t.Errorf("helm task %q has no chart_version", tk.name)
					}
					if args["atomic"] != true || args["wait"] != true || args["timeout"] == nil {
						t.Errorf("helm task %q: atomic=%v wait=%v timeout=%v", tk.name, args["atomic"], args["wait"], args["timeout"])
					}
				}
			}
			if role != "gitops-handoff" && helmApplies != 1 {
				t.Errorf("%d Helm installs in APPLY, want 1", helmApplies)
			}
		})
	}
}

func chartOf(p *spec.Platform, role string) spec.Chart {
	for _, c := range components {
		if c.Role == role {
			return c.chart(&p.Spec.Bootstrap.Charts)
		}
	}
	return spec.Chart{}
}

func vars(t *testing.T, files map[string][]byte, name string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal(files[name], &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m
}

// TestProhibitions walks every generated role and playbook for the practices
// docs/requirements.md#rfc-621-ansible-bootstrap-standards prohibits.
func TestProhibitions(t *testing.T) {
	files := generate(t, load(t, reference))
	for name, b := range files {
		if strings.HasPrefix(name, "roles/") && strings.Contains(name, "/files/") {
			continue // chart values, read by Helm
		}
		// No shell helm or kubectl, no sleeps, outside comments too.
		for i, line := range strings.Split(string(b), "\n") {
			code := strings.TrimSpace(line)
			if strings.HasPrefix(code, "#") {
				continue
			}
			if forbiddenText.MatchString(code) {
				t.Errorf("%s:%d: %s", name, i+1, code)
			}
		}
	}
	for _, role := range Roles {
		for _, tk := range roleTasks(t, files, role) {
			if forbiddenModules.MatchString(tk.module) || strings.HasPrefix(tk.module, "AMBIGUOUS") {
				t.Errorf("%s: task %q uses %s", role, tk.name, tk.module)
			}
			if _, ok := tk.raw["ignore_errors"]; ok {
				t.Errorf("%s: task %q ignores errors", role, tk.name)
			}
			if fw, ok := tk.raw["failed_when"]; ok && (fw == false || fw == "false") {
				t.Errorf("%s: task %q can never fail", role, tk.name)
			}
			if tk.module == "ansible.builtin.uri" || tk.module == "uri" {
				if args, _ := tk.args.(map[string]any); args != nil && args["method"] != "GET" {
					t.Errorf("%s: task %q calls an API with %v", role, tk.name, args["method"])
				}
			}
		}
	}
}

// TestSecretsComeFromVault: the Secrets the bootstrap writes (the Argo CD
// token, the webhook token) get their value from a vault_ variable, and
// the task hides it from the logs.
func TestSecretsComeFromVault(t *testing.T) {
	files := generate(t, load(t, reference))
	all := vars(t, files, "inventories/production/group_vars/all.yml")
	secrets := 0
	for _, role := range Roles {
		defaults := vars(t, files, "roles/"+role+"/defaults/main.yml")
		lookup := func(name string) (any, bool) {
			if v, ok := defaults[name]; ok {
				return v, true
			}
			v, ok := all[name]
			return v, ok
		}
		for _, tk := range roleTasks(t, files, role) {
			args, _ := tk.args.(map[string]any)
			def, _ := args["definition"].(map[string]any)
			if def == nil || def["kind"] != "Secret" {
				continue
			}
			secrets++
			if tk.raw["no_log"] != true {
				t.Errorf("%s: task %q writes a Secret without no_log", role, tk.name)
			}
			for _, field := range []string{"data", "stringData"} {
				v, ok := def[field]
				if !ok {
					continue
				}
				expr, _ := v.(string)
				if !strings.HasPrefix(expr, "{{") {
					t.Fatalf("%s: Secret %s is not a variable reference: %v", role, field, v)
				}
				if !resolvesToVault(expr, lookup, 0) {
					t.Errorf("%s: Secret %s %q does not come from a vault_ variable", role, field, expr)
				}
			}
		}
	}
	if secrets != 2 {
		t.Fatalf("%d Secret definitions, want 2 (the Argo CD token, the webhook token)", secrets)
	}
	// No variable that names a credential holds a literal.
	credential := regexp.MustCompile(`(token|password|passwd|credential)$`)
	for name, b := range files {
		if !strings.HasSuffix(name, "defaults/main.yml") && !strings.HasSuffix(name, "group_vars/all.yml") {
			continue
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for k, v := range m {
			s, _ := v.(string)
			if credential.MatchString(k) && !strings.HasPrefix(strings.TrimSpace(s), "{{") {
				t.Errorf("%s: %s holds a literal credential", name, k)
			}
		}
	}
}

var jinjaVar = regexp.MustCompile(`\b(vault_[a-z0-9_]+|[a-z][a-z0-9_]*)\b`)

// resolvesToVault follows variable references until one is a vault_ one.
func resolvesToVault(expr string, lookup func(string) (any, bool), depth int) bool {
	if depth > 5 {
		return false
	}
	for _, m := range jinjaVar.FindAllString(expr, -1) {
		if strings.HasPrefix(m, "vault_") {
			return true
		}
		if v, ok := lookup(m); ok {
			if s, ok := v.(string); ok && resolvesToVault(s, lookup, depth+1) {
				return true
			}
		}
	}
	return false
}

// TestRoleChain: meta dependencies and PRE-CHECK assertions follow docs/requirements.md#rfc-621-ansible-bootstrap-standards.
func TestRoleChain(t *testing.T) {
	files := generate(t, load(t, reference))
	chain := map[string][]string{
		"argocd": nil, "argo-workflows": {"argocd"}, "argo-events": {"argo-workflows"},
		"sealed-secrets": nil, "gitops-handoff": {"argocd", "sealed-secrets"},
	}
	for role, deps := range chain {
		var meta struct {
			Dependencies []struct{ Role string } `yaml:"dependencies"`
		}
		if err := yaml.Unmarshal(files["roles/"+role+"/meta/main.yml"], &meta); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range meta.Dependencies {
			got = append(got, d.Role)
		}
		if !reflect.DeepEqual(got, deps) {
			t.Errorf("%s depends on %v, want %v", role, got, deps)
		}
		asserted := map[string]bool{}
		for _, tk := range roleTasks(t, files, role) {
			if tk.module != "ansible.builtin.assert" || phaseOf(tk.name) != 0 {
				continue
			}
			for _, d := range deps {
				if strings.Contains(stringify(tk.args), varName(d)+"_status | default('') == 'success'") {
					asserted[d] = true
				}
			}
		}
		for _, d := range deps {
			if !asserted[d] {
				t.Errorf("%s does not assert %s_status == success in PRE-CHECK", role, varName(d))
			}
		}
	}
	// site.yml runs the roles in the order of docs/requirements.md#rfc-622-bootstrap-actions, in one play.
	var site []struct {
		Roles []struct{ Role string } `yaml:"roles"`
	}
	if err := yaml.Unmarshal(files["site.yml"], &site); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range site[0].Roles {
		order = append(order, r.Role)
	}
	if len(site) != 1 || !reflect.DeepEqual(order, Roles) {
		t.Fatalf("site.yml order %v", order)
	}
}

// TestHandoff: gitops-handoff installs the generated orchestration with a
// module, submits <platform>-deploy, and never creates an Application
// (INV-2, docs/requirements.md#inv-2-single-deployment-path: the deploy workflow's last node creates the root Application).
func TestHandoff(t *testing.T) {
	p := load(t, reference)
	files := generate(t, p)
	tasks := roleTasks(t, files, "gitops-handoff")
	defaults := vars(t, files, "roles/gitops-handoff/defaults/main.yml")

	var srcApply, submit bool
	for _, tk := range tasks {
		args, _ := tk.args.(map[string]any)
		if tk.module != "kubernetes.core.k8s" || phaseOf(tk.name) != 1 {
			continue
		}
		if args["src"] == "{{ item }}" && tk.raw["loop"] == "{{ gitops_handoff_manifests }}" {
			srcApply = true
		}
		def, _ := args["definition"].(map[string]any)
		if def != nil && def["kind"] == "Workflow" {
			submit = true
			spec, _ := def["spec"].(map[string]any)
			ref, _ := spec["workflowTemplateRef"].(map[string]any)
			if ref["name"] != "{{ gitops_handoff_deploy_template }}" || args["generate_name"] != "{{ gitops_handoff_deploy_template }}-" {
				t.Errorf("submission %v / %v", ref, args["generate_name"])
			}
		}
	}
	if !srcApply || !submit {
		t.Fatalf("manifest apply %v, deploy submission %v", srcApply, submit)
	}
	if defaults["gitops_handoff_deploy_template"] != "{{ deployctl_platform_name }}-deploy" {
		t.Errorf("deploy template %v", defaults["gitops_handoff_deploy_template"])
	}
	all := vars(t, files, "inventories/production/group_vars/all.yml")
	if all["deployctl_platform_name"] != p.Metadata.Name || all["deployctl_workflow_namespace"] != p.Spec.Workflow.Namespace {
		t.Errorf("group_vars %v", all)
	}
	if defaults["gitops_handoff_token_secret_name"] != p.Spec.ArgoCD.TokenSecret.Name ||
		defaults["gitops_handoff_token_secret_key"] != p.Spec.ArgoCD.TokenSecret.Key {
		t.Errorf("token secret %v/%v", defaults["gitops_handoff_token_secret_name"], defaults["gitops_handoff_token_secret_key"])
	}
	// The webhook token Secret: the spec's authSecret, written right after
	// the Argo CD token Secret, and only when its vaulted variable is set
	// (a run without it neither fails nor writes an empty token).
	hook := p.Spec.Events.WebhookAuthSecret()
	if defaults["gitops_handoff_webhook_secret_name"] != hook.Name || defaults["gitops_handoff_webhook_secret_key"] != hook.Key ||
		defaults["gitops_handoff_webhook_token"] != "{{ deployctl_webhook_token }}" ||
		all["deployctl_webhook_token"] != "{{ vault_deployctl_webhook_token | default('') }}" {
		t.Errorf("webhook secret %v/%v from %v, %v", defaults["gitops_handoff_webhook_secret_name"], defaults["gitops_handoff_webhook_secret_key"],
			defaults["gitops_handoff_webhook_token"], all["deployctl_webhook_token"])
	}
	for i, tk := range tasks {
		if tk.name != "Apply | Ensure the webhook token Secret of the EventSource" {
			continue
		}
		if i == 0 || tasks[i-1].name != "Apply | Ensure the Argo CD API token Secret for the workflows" {
			t.Errorf("the webhook Secret task does not follow the token Secret task")
		}
		if tk.raw["when"] != "gitops_handoff_webhook_token | length > 0" {
			t.Errorf("the webhook Secret task runs when %v", tk.raw["when"])
		}
		hook = spec.SecretKeyRef{}
	}
	if hook != (spec.SecretKeyRef{}) {
		t.Error("no task writes the webhook token Secret")
	}
	dirs := stringify(defaults["gitops_handoff_manifest_dirs"])
	for _, d := range []string{"applications", "gitops", "workflows\n"} {
		if strings.Contains(dirs, "- "+d) {
			t.Errorf("gitops-handoff applies %s", d)
		}
	}
	// Tasks may read Applications (the handoff's up-to-date check), never write one.
	for name, b := range files {
		if strings.Contains(string(b), "kind: Application\n") && !strings.HasSuffix(name, "/tasks/main.yml") {
			t.Errorf("%s defines an Application", name)
		}
	}
	for _, role := range Roles {
		for _, tk := range roleTasks(t, files, role) {
			args, _ := tk.args.(map[string]any)
			def, _ := args["definition"].(map[string]any)
			if tk.module != "kubernetes.core.k8s_info" && (args["kind"] == "Application" || def["kind"] == "Application") {
				t.Errorf("%s: task %q writes an Application (%s)", role, tk.name, tk.module)
			}
		}
	}
	if !strings.Contains(string(files["roles/gitops-handoff/tasks/main.yml"]), "deliberately NOT created\n# here (INV-2, deployctl docs/requirements.md#inv-2-single-deployment-path)") {
		t.Error("the handoff role does not say why it leaves the root Application to the deploy workflow")
	}
}

// TestArgoCDValues: the argocd role hands the health customizations of
// package health and the workflows' API account to the chart.
func TestArgoCDValues(t *testing.T) {
	p := load(t, reference)
	p.Spec.Bootstrap.Charts.ArgoCD.Values = map[string]any{
		"configs": map[string]any{"rbac": map[string]any{"policy.csv": "g, admins, role:admin"}, "cm": map[string]any{"url": "https://cd.example.com"}},
	}
	files := generate(t, p)
	var values struct {
		Configs struct {
			CM   map[string]string `yaml:"cm"`
			RBAC map[string]string `yaml:"rbac"`
		} `yaml:"configs"`
	}
	if err := yaml.Unmarshal(files["roles/argocd/files/values.yaml"], &values); err != nil {
		t.Fatal(err)
	}
	data, err := healthlua.ConfigMapData(p)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range data {
		if values.Configs.CM[k] != v {
			t.Errorf("values lack %s", k)
		}
	}
	if values.Configs.CM["url"] != "https://cd.example.com" || values.Configs.CM["accounts."+ArgoCDAccount] != "apiKey" {
		t.Errorf("configs.cm = %v", values.Configs.CM)
	}
	policy := values.Configs.RBAC["policy.csv"]
	if !strings.HasPrefix(policy, "g, admins, role:admin\n") || !strings.Contains(policy, "p, role:deployctl, applications, *, default/*, allow") ||
		!strings.Contains(policy, "g, deployctl, role:deployctl") {
		t.Errorf("policy.csv = %q", policy)
	}
	var keys []string
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	defaults := vars(t, files, "roles/argocd/defaults/main.yml")
	if got := stringify(defaults["argocd_health_customization_keys"]); got != stringify(keys) {
		t.Errorf("VALIDATE expects keys %s, want %s", got, stringify(keys))
	}
}

func TestRefusesUnpinnedAndUnsafeInput(t *testing.T) {
	cases := map[string]struct {
		edit func(*spec.Platform)
		want string
	}{
		"latest":  {func(p *spec.Platform) { p.Spec.Bootstrap.Charts.ArgoCD.Version = "latest" }, "spec.bootstrap.charts.argocd.version"},
		"range":   {func(p *spec.Platform) { p.Spec.Bootstrap.Charts.ArgoEvents.Version = "^2.4.0" }, "spec.bootstrap.charts.argoEvents.version"},
		"no repo": {func(p *spec.Platform) { p.Spec.Bootstrap.Charts.SealedSecrets.Repo = "" }, "spec.bootstrap.charts.sealedSecrets.repo"},
		"jinja": {func(p *spec.Platform) {
			p.Spec.Bootstrap.Charts.ArgoWorkflows.Repo = "https://x/{{ lookup('env','HOME') }}"
		}, "Jinja"},
		"lua": {func(p *spec.Platform) { p.Spec.HealthCustomizations[0].Lua = "return {" }, "Lua does not compile"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := load(t, reference)
			tc.edit(p)
			_, err := Generate(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestOCIChart(t *testing.T) {
	p := load(t, reference)
	p.Spec.Bootstrap.Charts.SealedSecrets.Repo = "oci://registry.example.com/charts"
	d := vars(t, generate(t, p), "roles/sealed-secrets/defaults/main.yml")
	if d["sealed_secrets_chart_ref"] != "{{ sealed_secrets_chart_repo }}/{{ sealed_secrets_chart_name }}" || d["sealed_secrets_chart_repo_url"] != "" {
		t.Fatalf("OCI chart ref %v, repo url %v", d["sealed_secrets_chart_ref"], d["sealed_secrets_chart_repo_url"])
	}
}

// writeTree writes the bootstrap where generate puts it.
func writeTree(t *testing.T, p *spec.Platform) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "generated", p.Metadata.Name, "bootstrap")
	for name, b := range generate(t, p) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func need(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("%s is not installed (Debian package %s; CI installs it): %v", tool, debianPackage[tool], err)
	}
}

var debianPackage = map[string]string{"ansible-playbook": "ansible", "ansible-lint": "ansible-lint"}

func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ANSIBLE_CONFIG="+filepath.Join(dir, "ansible.cfg"), "NO_COLOR=1", "ANSIBLE_NOCOLOR=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
}

// TestAnsibleSyntaxCheck runs ansible-playbook --syntax-check on site.yml
// and every playbook, with the generated ansible.cfg (roles path).
func TestAnsibleSyntaxCheck(t *testing.T) {
	need(t, "ansible-playbook")
	dir := writeTree(t, load(t, reference))
	playbooks := []string{"site.yml"}
	for _, r := range Roles {
		playbooks = append(playbooks, "playbooks/"+r+".yml")
	}
	for _, pb := range playbooks {
		run(t, dir, "ansible-playbook", "--syntax-check", pb)
	}
}

// TestAnsibleLint runs ansible-lint on the generated tree (offline: the
// collections come from the system, nothing is fetched).
// The tree of a spec naming argocd.caSecret (the handoff's CA tasks) too.
func TestAnsibleLint(t *testing.T) {
	need(t, "ansible-lint")
	for _, p := range []*spec.Platform{load(t, reference), withCA(t)} {
		dir := writeTree(t, p)
		run(t, dir, "ansible-lint", "--offline", "--nocolor")
	}
}

// fakeSpecHash is the spec hash of runSite's generated deploy template.
const fakeSpecHash = "0123456789abcdef"

// fakeCluster is the state file of testdata/fakecluster, a stand-in for the
// kubernetes.core collection whose modules answer from a JSON file.
type fakeCluster struct {
	Charts        map[string]fakeChart  `json:"charts"`
	Releases      map[string]fakeRel    `json:"releases"`
	Objects       map[string]fakeObject `json:"objects"`
	Applied       []string              `json:"applied"`
	BadCharts     []string              `json:"bad_charts"`
	WorkflowPhase string                `json:"workflow_phase"`
	Calls         []map[string]any      `json:"calls"`
}

type fakeChart struct {
	CRDs         []string `json:"crds"`
	Deployments  []string `json:"deployments"`
	StatefulSets []string `json:"statefulsets"`
	Endpoints    []string `json:"endpoints"`
	Kinds        []string `json:"kinds"`
}

type fakeRel struct {
	Name      string         `json:"name"`
	Namespace string         `json:"namespace"`
	ChartName string         `json:"chart_name"`
	Chart     string         `json:"chart"`
	Revision  int            `json:"revision"`
	Status    string         `json:"status"`
	Values    map[string]any `json:"values"`
}

type fakeObject struct {
	Kind     string `json:"kind,omitempty"`
	Metadata struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		Labels            map[string]string `json:"labels,omitempty"`
		CreationTimestamp string            `json:"creationTimestamp,omitempty"`
	} `json:"metadata"`
	Data map[string]string `json:"data,omitempty"`
	Spec struct {
		WorkflowTemplateRef struct {
			Name string `json:"name,omitempty"`
		} `json:"workflowTemplateRef"`
	} `json:"spec"`
	Status  map[string]any `json:"status,omitempty"`
	Manager string         `json:"manager,omitempty"` // the fake's: the field manager of the last apply
}

// object makes a fake object for a test to put in the cluster first.
func object(kind, ns, name string, labels map[string]string, data map[string]string, status map[string]any) fakeObject {
	var o fakeObject
	o.Kind, o.Metadata.Name, o.Metadata.Namespace, o.Metadata.Labels, o.Data, o.Status = kind, name, ns, labels, data, status
	return o
}

func (fc *fakeCluster) put(o fakeObject) {
	fc.Objects[o.Kind+"/"+o.Metadata.Namespace+"/"+o.Metadata.Name] = o
}

func newFakeCluster(p *spec.Platform) *fakeCluster {
	fc := &fakeCluster{Charts: map[string]fakeChart{}, Releases: map[string]fakeRel{}, Objects: map[string]fakeObject{},
		Applied: []string{}, BadCharts: []string{}, Calls: []map[string]any{}, WorkflowPhase: "Running"}
	for _, c := range components {
		fc.Charts[c.chart(&p.Spec.Bootstrap.Charts).Chart] = fakeChart{
			CRDs: c.CRDs, Deployments: c.Deployments, StatefulSets: c.StatefulSets, Endpoints: c.Endpoints, Kinds: []string{c.APICheck.Kind},
		}
	}
	return fc
}

// bootstrapRun is one ansible-playbook run of site.yml against a fake cluster.
type bootstrapRun struct {
	ok      bool
	output  string
	reports []map[string]any // the RESULT reports, in order
	state   fakeCluster
}

// runSite writes the tree with sibling folders of manifests, encrypts the
// token with ansible-vault, and runs site.yml against the fake cluster.
func runSite(t *testing.T, p *spec.Platform, fc *fakeCluster, extra ...string) (bootstrapRun, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs ansible-playbook for minutes; skipped with -short")
	}
	need(t, "ansible-playbook")
	need(t, "ansible-vault")
	dir := writeTree(t, p)
	gen := filepath.Dir(dir)
	siblings := map[string]string{
		"rbac/deployctl.yaml":                           "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: deployctl, namespace: argo}\n",
		"rbac/kustomization.yaml":                       "resources: [deployctl.yaml]\n",
		"cluster-workflow-templates/sync-and-wait.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: ClusterWorkflowTemplate\nmetadata: {name: deployctl-sync-and-wait}\nspec:\n  templates:\n  - name: s\n    container: {image: x, args: ['{{inputs.parameters.app}}']}\n",
		"cluster-workflow-templates/kustomization.yaml": "resources: [sync-and-wait.yaml]\n",
		"workflow-templates/deploy.yaml": "# Generated\napiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\nmetadata:\n  name: " + p.Metadata.Name +
			"-deploy\n  namespace: argo\n  labels: {deployctl.dev/spec-hash: " + fakeSpecHash + "}\n",
		"events/sensor.yaml":           "apiVersion: argoproj.io/v1alpha1\nkind: Sensor\nmetadata: {name: s, namespace: argo}\n",
		"applications/metallb.yaml":    "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: metallb}\n",
		"gitops/root-application.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: root}\n",
	}
	for name, body := range siblings {
		path := filepath.Join(gen, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	work := t.TempDir()
	pw, vault, state := filepath.Join(work, "pw"), filepath.Join(work, "vault.yml"), filepath.Join(work, "state.json")
	must(t, os.WriteFile(pw, []byte("test-password\n"), 0o600))
	must(t, os.WriteFile(vault, []byte("vault_deployctl_argocd_token: s3cret-token\nvault_deployctl_webhook_token: h00k-token\n"), 0o600))
	run(t, work, "ansible-vault", "encrypt", "--vault-password-file", pw, vault)
	b, err := json.Marshal(fc)
	must(t, err)
	must(t, os.WriteFile(state, b, 0o600))

	fake, err := filepath.Abs("testdata/fakecluster")
	must(t, err)
	cmd := exec.Command("ansible-playbook", append([]string{"site.yml", "--vault-password-file", pw, "-e", "@" + vault,
		"-e", "deployctl_validate_retries=1", "-e", "deployctl_validate_delay=1"}, extra...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ANSIBLE_CONFIG="+filepath.Join(dir, "ansible.cfg"), "ANSIBLE_NOCOLOR=1",
		"ANSIBLE_COLLECTIONS_PATH="+fake, "ANSIBLE_PIPELINING=True", "DEPLOYCTL_FAKE_CLUSTER="+state, "ANSIBLE_STDOUT_CALLBACK=ansible.posix.json")
	out, runErr := cmd.CombinedOutput()
	r := bootstrapRun{ok: runErr == nil, output: string(out)}
	b, err = os.ReadFile(state)
	must(t, err)
	must(t, json.Unmarshal(b, &r.state))

	var cb struct {
		Plays []struct {
			Tasks []struct {
				Task struct {
					Name string `json:"name"`
				} `json:"task"`
				Hosts map[string]struct {
					Msg     any  `json:"msg"`
					Skipped bool `json:"skipped"`
				} `json:"hosts"`
			} `json:"tasks"`
		} `json:"plays"`
	}
	start := strings.Index(r.output, "{")
	if start < 0 || json.Unmarshal([]byte(r.output[start:]), &cb) != nil {
		t.Fatalf("no JSON from ansible-playbook:\n%s", r.output)
	}
	for _, play := range cb.Plays {
		for _, tk := range play.Tasks {
			if !strings.HasSuffix(tk.Task.Name, ": Result | Report the outcome") {
				continue
			}
			if h, ok := tk.Hosts["localhost"]; ok && !h.Skipped {
				if m, ok := h.Msg.(map[string]any); ok {
					r.reports = append(r.reports, m)
				}
			}
		}
	}
	return r, gen
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func statuses(r bootstrapRun) []string {
	var out []string
	for _, m := range r.reports {
		out = append(out, fmt.Sprint(m["role"], "=", m["status"]))
	}
	return out
}

func helmCalls(r bootstrapRun) []map[string]any {
	var out []map[string]any
	for _, c := range r.state.Calls {
		if c["module"] == "helm" {
			out = append(out, c)
		}
	}
	return out
}

// TestBootstrapRunsAgainstAFakeCluster runs the generated site.yml with
// Ansible, its kubernetes.core modules answered by a fake cluster: every role
// walks its phases to success in the order of docs/requirements.md#rfc-622-bootstrap-actions, Helm gets the pinned charts,
// the handoff applies exactly the orchestration folders (Argo expressions
// untouched, no Applications), writes the vaulted token and submits the
// deploy workflow, and the token never reaches the output.
//
// The spec names a caSecret: the handoff writes it, labelled as deployctl's,
// from the self-signed certificate Argo CD's argocd-server made for itself
// (argocd-secret's tls.crt). The last deploy of this spec Succeeded, but one
// app is Degraded: so a new deploy is submitted, saying why.
func TestBootstrapRunsAgainstAFakeCluster(t *testing.T) {
	t.Parallel()
	p := load(t, reference)
	p.Spec.ArgoCD.CASecret = &spec.SecretKeyRef{Name: "argocd-ca", Key: "ca.crt"}
	fc := newFakeCluster(p)
	served := selfSigned(t, argoCDHosts("argocd")...)
	fc.put(object("Secret", "argocd", "argocd-secret", nil, map[string]string{"tls.crt": b64(served), "tls.key": "c2VjcmV0LWtleQ=="}, nil))
	fc.put(finishedDeploy(p, "e2e-old", "2029-01-01T00:00:00Z", fakeSpecHash, "Succeeded"))
	for _, a := range applications(p) {
		health := "Healthy"
		if a == "argocd/backstage" {
			health = "Degraded"
		}
		fc.put(application(p, a, health, "Synced"))
	}
	r, gen := runSite(t, p, fc)
	if !r.ok {
		t.Fatalf("site.yml failed:\n%s", r.output)
	}
	if strings.Contains(r.output, "c2VjcmV0LWtleQ==") {
		t.Error("argocd-secret's key reached ansible-playbook's output")
	}
	ca := r.state.Objects["Secret/argo/argocd-ca"]
	if got := unb64(t, ca.Data["ca.crt"]); got != strings.TrimSpace(served) || ca.Metadata.Labels["app.kubernetes.io/managed-by"] != "deployctl" ||
		ca.Metadata.Labels["deployctl.dev/platform"] != p.Metadata.Name {
		t.Errorf("CA Secret %+v, want argocd-secret's tls.crt, labelled", ca)
	}
	handoff := r.reports[len(r.reports)-1]
	if handoff["decision"] != "submit" || handoff["reason"] != "the last run e2e-old of this spec Succeeded, but argocd/backstage is Degraded/Synced" ||
		handoff["ca_secret"] != "argo/argocd-ca from Secret argocd-secret, tls.crt" {
		t.Errorf("handoff report %v", handoff)
	}
	want := []string{"argocd=success", "argo-workflows=success", "argo-events=success", "sealed-secrets=success", "gitops-handoff=success"}
	if got := statuses(r); !reflect.DeepEqual(got, want) {
		t.Fatalf("results %v, want %v\n%s", got, want, r.output)
	}
	helms := helmCalls(r)
	if len(helms) != 4 {
		t.Fatalf("%d helm calls, want 4", len(helms))
	}
	for i, c := range components {
		call, chart := helms[i], c.chart(&p.Spec.Bootstrap.Charts)
		files, _ := call["values_files"].([]any)
		if call["chart_version"] != chart.Version || call["chart_ref"] != chart.Chart || call["chart_repo_url"] != chart.Repo ||
			len(files) != 1 || !strings.HasSuffix(fmt.Sprint(files[0]), "roles/"+c.Role+"/files/values.yaml") {
			t.Errorf("helm call %d: %v", i, call)
		}
	}
	var applied []string
	for _, a := range r.state.Applied {
		rel, err := filepath.Rel(gen, a)
		must(t, err)
		applied = append(applied, rel)
	}
	wantApplied := []string{"cluster-workflow-templates/sync-and-wait.yaml", "events/sensor.yaml", "rbac/deployctl.yaml", "workflow-templates/deploy.yaml"}
	if !reflect.DeepEqual(applied, wantApplied) {
		t.Errorf("applied %v, want %v", applied, wantApplied)
	}
	// The handoff's first change comes after the last Helm install.
	firstApply, lastHelm := -1, -1
	for i, c := range r.state.Calls {
		if c["module"] == "helm" {
			lastHelm = i
		}
		if c["module"] == "k8s" && firstApply < 0 {
			firstApply = i
		}
	}
	if firstApply < lastHelm {
		t.Errorf("the handoff applied manifests (call %d) before the last Helm install (call %d)", firstApply, lastHelm)
	}

	secret, ok := r.state.Objects["Secret/argo/"+p.Spec.ArgoCD.TokenSecret.Name]
	if !ok || secret.Data[p.Spec.ArgoCD.TokenSecret.Key] != "czNjcmV0LXRva2Vu" { // base64("s3cret-token")
		t.Errorf("token Secret %+v", secret)
	}
	var wfs []fakeObject
	for key, o := range r.state.Objects {
		if strings.HasPrefix(key, "Workflow/") && o.Metadata.Name != "e2e-old" {
			wfs = append(wfs, o)
		}
	}
	if len(wfs) != 1 || !strings.HasPrefix(wfs[0].Metadata.Name, p.Metadata.Name+"-deploy-") ||
		wfs[0].Spec.WorkflowTemplateRef.Name != p.Metadata.Name+"-deploy" ||
		wfs[0].Metadata.Labels["deployctl.dev/platform"] != p.Metadata.Name || wfs[0].Metadata.Labels["deployctl.dev/action"] != "deploy" ||
		wfs[0].Metadata.Labels["deployctl.dev/spec-hash"] != fakeSpecHash {
		t.Errorf("submitted workflows %+v", wfs)
	}
	if strings.Contains(r.output, "s3cret-token") || strings.Contains(r.output, "czNjcmV0LXRva2Vu") {
		t.Error("the token reached ansible-playbook's output")
	}
	hook := p.Spec.Events.WebhookAuthSecret()
	if secret, ok := r.state.Objects["Secret/argo/"+hook.Name]; !ok || len(secret.Data) != 1 || secret.Data[hook.Key] != "aDAway10b2tlbg==" { // base64("h00k-token")
		t.Errorf("webhook token Secret %s: %+v", hook.Name, secret)
	}
	if strings.Contains(r.output, "h00k-token") || strings.Contains(r.output, "aDAway10b2tlbg==") {
		t.Error("the webhook token reached ansible-playbook's output")
	}
}

// TestBootstrapRollsBackAFailedValidation: argo-events' new chart never gets
// Ready, so the atomic, waiting install fails in APPLY (Helm puts the
// previous release back, as the real helm did on the e2e cluster, issue 26);
// TEST and VALIDATE are skipped, ROLLBACK restores the previous chart and
// values and re-validates, RESULT says rolled_back with Helm's reason, and
// nothing after it runs.
func TestBootstrapRollsBackAFailedValidation(t *testing.T) {
	t.Parallel()
	p := load(t, reference)
	fc := newFakeCluster(p)
	events := p.Spec.Bootstrap.Charts.ArgoEvents
	fc.BadCharts = []string{events.Chart + "-" + events.Version}
	fc.Releases["argo-events/argo-events"] = fakeRel{
		Name: "argo-events", Namespace: EventsNamespace, ChartName: events.Chart, Chart: events.Chart + "-2.4.8",
		Revision: 3, Status: "deployed", Values: map[string]any{"previous": true},
	}
	r, _ := runSite(t, p, fc)
	if r.ok {
		t.Fatal("site.yml succeeded with a broken argo-events")
	}
	want := []string{"argocd=success", "argo-workflows=success", "argo-events=rolled_back"}
	if got := statuses(r); !reflect.DeepEqual(got, want) {
		t.Fatalf("results %v, want %v\n%s", got, want, r.output)
	}
	var versions []any
	for _, c := range helmCalls(r) {
		if c["name"] == "argo-events" {
			versions = append(versions, c["chart_version"])
		}
	}
	if !strings.Contains(r.output, "argo-events ended rolled_back: Apply | Install or upgrade Argo Events with Helm (atomic, wait): Failure when executing Helm command") {
		t.Errorf("the playbook's failure does not give Helm's reason:\n%s", r.output)
	}
	if !reflect.DeepEqual(versions, []any{events.Version, "2.4.8"}) {
		t.Errorf("argo-events helm versions %v, want [%s 2.4.8]", versions, events.Version)
	}
	if rel := r.state.Releases["argo-events/argo-events"]; rel.Chart != events.Chart+"-2.4.8" || rel.Values["previous"] != true {
		t.Errorf("argo-events after rollback: %+v", rel)
	}
	// RESULT names the release the rollback restored.
	if rep := r.reports[2]; rep["chart"] != events.Chart+"-2.4.8" || fmt.Sprint(rep["revision"]) != "4" || rep["version"] != "v2.4.8" {
		t.Errorf("argo-events RESULT %v, want the restored release (chart %s-2.4.8, revision 4)", rep, events.Chart)
	}
	if len(r.state.Applied) != 0 || len(r.state.Objects) != 0 {
		t.Errorf("the handoff ran after a failed role: applied %v, objects %v", r.state.Applied, r.state.Objects)
	}
}
