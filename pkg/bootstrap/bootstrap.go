// Package bootstrap generates Phase 1 of a platform (RFC 6.2, docs/requirements.md#rfc-62-phase-1-bootstrap) as Ansible,
// into generated/<platform>/bootstrap/, in exactly the layout of docs/requirements.md#rfc-621-ansible-bootstrap-standards:
//
//	ansible.cfg, requirements.yml, site.yml,
//	inventories/production/{hosts.yml,group_vars/all.yml},
//	playbooks/{argocd,argo-workflows,argo-events,sealed-secrets,gitops-handoff}.yml,
//	roles/{argocd,argo-workflows,argo-events,sealed-secrets,gitops-handoff}/
//	  {tasks,defaults,meta}/main.yml (+ files/values.yaml for the Helm roles)
//
// Every role's tasks run the six phases of docs/requirements.md#rfc-621-ansible-bootstrap-standards in order (task names
// start with "Pre-check |", "Apply |", "Test |", "Validate |",
// "Rollback |", "Result |"), inside one block whose rescue and always parts
// make RESULT run on any failure and set <role>_status (success, failed,
// rolled_back). The four Helm roles install their chart with
// kubernetes.core.helm only, at the version pinned in spec.bootstrap.charts,
// atomic and waiting. The role chain of docs/requirements.md#rfc-621-ansible-bootstrap-standards (argo-workflows needs argocd,
// argo-events needs argo-workflows, gitops-handoff needs argocd and
// sealed-secrets) is declared as meta dependencies and asserted on the
// status facts. The argocd role passes the health customizations of package
// health to the chart (configs.cm), with an API account for the workflows.
//
// gitops-handoff applies the orchestration manifests generated beside the
// bootstrap folder (kubernetes.core.k8s, server-side apply of the files),
// ensures the Argo CD API token Secret of the workflows (its value from an
// Ansible Vault variable, never plain text) and, when its vaulted variable
// is set, the bearer token Secret of the webhook EventSource
// (spec.events.webhook.authSecret), and submits the platform deploy
// workflow (RFC 6.2.2 step 9, docs/requirements.md#rfc-622-bootstrap-actions). It does not create the root Application: the
// deploy workflow's last node does, through the Argo CD API, once every app
// is Healthy (INV-2, docs/requirements.md#inv-2-single-deployment-path).
//
// When the spec names argocd.caSecret, gitops-handoff also writes that
// Secret (labelled as deployctl's; never replacing one deployctl did not
// write), from deployctl_argocd_ca or else the certificate argocd-server
// serves, parsed and checked for spec.argocd.server's host first. It
// decides about the deploy as the executor does: it follows a deploy of
// this spec still running, submits nothing when the last one Succeeded and
// every app is Healthy and Synced, and refuses while another run goes on.
//
// Generate returns nothing for a platform without a bootstrap section.
package bootstrap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/pkg/compile"
	"github.com/deployctl/deployctl/pkg/healthlua"
	"github.com/deployctl/deployctl/pkg/spec"
	"github.com/deployctl/deployctl/templates"
)

// Fixed names of the bootstrap.
const (
	// EventsNamespace is where the Argo Events controller is installed.
	EventsNamespace = "argo-events"
	// SealedSecretsNamespace is where the Sealed Secrets controller is
	// installed (kubeseal's default).
	SealedSecretsNamespace = "kube-system"
	// ArgoCDAccount is the Argo CD local account whose API token the
	// workflows use; the argocd role declares it with apiKey capability.
	ArgoCDAccount = "deployctl"
)

// Roles lists the roles in the order site.yml runs them (docs/requirements.md#rfc-622-bootstrap-actions).
var Roles = []string{"argocd", "argo-workflows", "argo-events", "sealed-secrets", "gitops-handoff"}

// Phases are the task phases of docs/requirements.md#rfc-621-ansible-bootstrap-standards, as task-name prefixes, in order.
var Phases = []string{"Pre-check", "Apply", "Test", "Validate", "Rollback", "Result"}

// ManifestDirs are the folders of generated/<platform>/ that gitops-handoff
// applies, in this order. RequiredDirs must not be empty.
var (
	ManifestDirs = []string{"rbac", "cluster-workflow-templates", "workflow-templates", "events"}
	RequiredDirs = []string{"rbac", "cluster-workflow-templates", "workflow-templates"}
)

// apiCheck is a kind whose list the VALIDATE phase requires to be served.
type apiCheck struct{ APIVersion, Kind string }

// component is one Helm role.
type component struct {
	Role, Title, Steps, SpecKey, Release, NamespaceVar string
	Requires                                           []string
	CRDs, Deployments, StatefulSets, Endpoints         []string
	APICheck                                           apiCheck
	chart                                              func(*spec.Charts) spec.Chart
}

var components = []component{
	{
		Role: "argocd", Title: "Argo CD", Steps: "bootstrap steps 1 to 3, deployctl docs/requirements.md#rfc-622-bootstrap-actions", SpecKey: "argocd",
		Release: "argocd", NamespaceVar: "deployctl_argocd_namespace",
		CRDs:         []string{"applications.argoproj.io", "applicationsets.argoproj.io", "appprojects.argoproj.io"},
		Deployments:  []string{"argocd-server", "argocd-repo-server", "argocd-redis"},
		StatefulSets: []string{"argocd-application-controller"},
		Endpoints:    []string{"argocd-server", "argocd-repo-server"},
		APICheck:     apiCheck{"argoproj.io/v1alpha1", "Application"},
		chart:        func(c *spec.Charts) spec.Chart { return c.ArgoCD },
	},
	{
		Role: "argo-workflows", Title: "Argo Workflows", Steps: "bootstrap step 4, deployctl docs/requirements.md#rfc-622-bootstrap-actions", SpecKey: "argoWorkflows",
		Release: "argo-workflows", NamespaceVar: "deployctl_workflow_namespace", Requires: []string{"argocd"},
		CRDs: []string{
			"clusterworkflowtemplates.argoproj.io", "cronworkflows.argoproj.io", "workflows.argoproj.io",
			"workflowtaskresults.argoproj.io", "workflowtemplates.argoproj.io",
		},
		Deployments: []string{"argo-workflows-workflow-controller", "argo-workflows-server"},
		Endpoints:   []string{"argo-workflows-server"},
		APICheck:    apiCheck{"argoproj.io/v1alpha1", "WorkflowTemplate"},
		chart:       func(c *spec.Charts) spec.Chart { return c.ArgoWorkflows },
	},
	{
		Role: "argo-events", Title: "Argo Events", Steps: "bootstrap step 6, deployctl docs/requirements.md#rfc-622-bootstrap-actions", SpecKey: "argoEvents",
		Release: "argo-events", NamespaceVar: "deployctl_events_namespace", Requires: []string{"argo-workflows"},
		CRDs:        []string{"eventbus.argoproj.io", "eventsources.argoproj.io", "sensors.argoproj.io"},
		Deployments: []string{"argo-events-controller-manager"},
		APICheck:    apiCheck{"argoproj.io/v1alpha1", "EventBus"},
		chart:       func(c *spec.Charts) spec.Chart { return c.ArgoEvents },
	},
	{
		Role: "sealed-secrets", Title: "Sealed Secrets", Steps: "the secrets the platform's apps unseal", SpecKey: "sealedSecrets",
		Release: "sealed-secrets-controller", NamespaceVar: "deployctl_sealed_secrets_namespace",
		CRDs:        []string{"sealedsecrets.bitnami.com"},
		Deployments: []string{"sealed-secrets-controller"},
		Endpoints:   []string{"sealed-secrets-controller"},
		APICheck:    apiCheck{"bitnami.com/v1alpha1", "SealedSecret"},
		chart:       func(c *spec.Charts) spec.Chart { return c.SealedSecrets },
	},
}

// handoffRequires is gitops-handoff's place in the role chain (docs/requirements.md#rfc-621-ansible-bootstrap-standards).
var handoffRequires = []string{"argocd", "sealed-secrets"}

// handoffCRDs are the kinds of the manifests gitops-handoff applies.
var handoffCRDs = []string{
	"applications.argoproj.io", "clusterworkflowtemplates.argoproj.io", "cronworkflows.argoproj.io",
	"eventbus.argoproj.io", "eventsources.argoproj.io", "sensors.argoproj.io",
	"workflows.argoproj.io", "workflowtemplates.argoproj.io",
}

var (
	versionRe = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$`)
	jinjaRe   = regexp.MustCompile(`\{\{|\{%|\{#|\}\}|%\}|#\}`)
)

// varName is the Ansible variable prefix of a role.
func varName(role string) string { return strings.ReplaceAll(role, "-", "_") }

// Generate returns generated/<platform>/bootstrap/, relative to that folder;
// nil for a platform without spec.bootstrap.
func Generate(p *spec.Platform) (map[string][]byte, error) {
	b := p.Spec.Bootstrap
	if b == nil {
		return nil, nil
	}
	for _, c := range components {
		if err := checkChart("spec.bootstrap.charts."+c.SpecKey, c.chart(&b.Charts)); err != nil {
			return nil, err
		}
	}
	ca, err := caSecretOf(p)
	if err != nil {
		return nil, err
	}
	tokenName, tokenKey := p.Spec.ArgoCD.TokenSecret.Name, p.Spec.ArgoCD.TokenSecret.Key
	if tokenName == "" {
		tokenName = spec.DefaultTokenSecret
	}
	if tokenKey == "" {
		tokenKey = spec.DefaultTokenKey
	}
	webhook := p.Spec.Events.WebhookAuthSecret()
	base := map[string]any{
		"Platform":               p.Metadata.Name,
		"CASecretName":           ca.name,
		"CASecretKey":            ca.key,
		"ArgoCDHost":             ca.host,
		"ArgoCDNamespace":        p.Spec.ArgoCD.Namespace,
		"WorkflowNamespace":      p.Spec.Workflow.Namespace,
		"WorkflowServiceAccount": p.Spec.Workflow.ServiceAccount,
		"EventsNamespace":        EventsNamespace,
		"SealedSecretsNamespace": SealedSecretsNamespace,
		"Projects":               projects(p),
	}
	for field, v := range map[string]string{
		"metadata.name": p.Metadata.Name, "spec.argocd.namespace": p.Spec.ArgoCD.Namespace,
		"spec.workflow.namespace": p.Spec.Workflow.Namespace, "spec.workflow.serviceAccount": p.Spec.Workflow.ServiceAccount,
	} {
		if v == "" {
			return nil, fmt.Errorf("%s is required for the bootstrap", field)
		}
	}

	r := &renderer{files: map[string][]byte{}}
	r.render("ansible.cfg", "ansible.cfg.tmpl", base)
	r.render("requirements.yml", "requirements.yml.tmpl", base)
	r.render("inventories/production/hosts.yml", "inventories/production/hosts.yml.tmpl", base)
	r.render("inventories/production/group_vars/all.yml", "inventories/production/group_vars/all.yml.tmpl", base)

	var playbooks []map[string]any
	for _, role := range Roles {
		title := "Bootstrap " + roleTitle(role)
		playbooks = append(playbooks, map[string]any{"Role": role, "Title": title})
		r.render("playbooks/"+role+".yml", "playbook.yml.tmpl", with(base, map[string]any{"Role": role, "Title": title}))
	}
	r.render("site.yml", "site.yml.tmpl", with(base, map[string]any{"Playbooks": playbooks}))

	healthKeys, argocdValues, err := argocdChartValues(p)
	if err != nil {
		return nil, err
	}
	for _, c := range components {
		chart := c.chart(&b.Charts)
		values := chart.Values
		note := "spec.bootstrap.charts." + c.SpecKey + ".values"
		var keys []string
		if c.Role == "argocd" {
			values, keys = argocdValues, healthKeys
			note += ", the health customizations and the " + ArgoCDAccount + " API account"
		}
		data := with(base, map[string]any{
			"Role": c.Role, "P": varName(c.Role), "Title": c.Title, "Steps": c.Steps, "SpecKey": c.SpecKey,
			"Release": c.Release, "NamespaceVar": c.NamespaceVar, "Requires": c.Requires,
			"DependsOn": c.Requires, "Description": "Installs " + c.Title + " with Helm (deployctl docs/requirements.md#rfc-621-ansible-bootstrap-standards)",
			"Chart": chart, "OCI": strings.HasPrefix(chart.Repo, "oci://"), "ValuesNote": note,
			"CRDs": c.CRDs, "Deployments": c.Deployments, "StatefulSets": c.StatefulSets, "Endpoints": c.Endpoints,
			"APICheck": c.APICheck, "HealthKeys": keys,
		})
		dir := "roles/" + c.Role + "/"
		r.render(dir+"tasks/main.yml", "roles/helm-tasks.yml.tmpl", data)
		r.render(dir+"defaults/main.yml", "roles/helm-defaults.yml.tmpl", data)
		r.render(dir+"meta/main.yml", "roles/meta.yml.tmpl", data)
		r.values(dir+"files/values.yaml", p.Metadata.Name, note, values)
	}

	handoff := with(base, map[string]any{
		"Role": "gitops-handoff", "Requires": handoffRequires, "DependsOn": handoffRequires,
		"Applications": applications(p),
		"Description":  "Applies the generated orchestration and submits the platform deploy workflow (deployctl docs/requirements.md#rfc-622-bootstrap-actions)",
		"ManifestDirs": ManifestDirs, "RequiredDirs": RequiredDirs, "RequiredCRDs": handoffCRDs,
		"TokenSecretName": tokenName, "TokenSecretKey": tokenKey,
		"WebhookSecretName": webhook.Name, "WebhookSecretKey": webhook.Key,
	})
	r.render("roles/gitops-handoff/tasks/main.yml", "roles/gitops-handoff-tasks.yml.tmpl", handoff)
	r.render("roles/gitops-handoff/defaults/main.yml", "roles/gitops-handoff-defaults.yml.tmpl", handoff)
	r.render("roles/gitops-handoff/meta/main.yml", "roles/meta.yml.tmpl", handoff)
	if r.err != nil {
		return nil, r.err
	}
	return r.files, nil
}

func roleTitle(role string) string {
	for _, c := range components {
		if c.Role == role {
			return c.Title
		}
	}
	return "the GitOps handoff"
}

func with(base, extra map[string]any) map[string]any {
	m := make(map[string]any, len(base)+len(extra))
	for k, v := range base {
		m[k] = v
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// checkChart requires a complete, exactly pinned chart.
func checkChart(field string, c spec.Chart) error {
	switch {
	case c.Repo == "":
		return fmt.Errorf("%s.repo is required", field)
	case c.Chart == "":
		return fmt.Errorf("%s.chart is required", field)
	case !versionRe.MatchString(c.Version):
		return fmt.Errorf("%s.version %q must be an exact chart version (like 1.2.3), not a range or latest", field, c.Version)
	}
	return nil
}

// caSecret is spec.argocd.caSecret for the handoff (empty without one),
// with the host of spec.argocd.server its certificate must name.
type caSecret struct{ name, key, host string }

func caSecretOf(p *spec.Platform) (caSecret, error) {
	ref := p.Spec.ArgoCD.CASecret
	if ref == nil {
		return caSecret{}, nil
	}
	ca := caSecret{name: ref.Name, key: ref.Key}
	if ca.key == "" {
		ca.key = "ca.crt" // as the steps mount it
	}
	host, _, err := net.SplitHostPort(p.Spec.ArgoCD.Server)
	if err != nil {
		return caSecret{}, fmt.Errorf("spec.argocd.server %q: %w", p.Spec.ArgoCD.Server, err)
	}
	ca.host = host
	return ca, nil
}

// applications are the platform's Applications as namespace/name, sorted:
// every app's and, with spec.bootstrap.rootApplication, the root one.
func applications(p *spec.Platform) []string {
	var out []string
	for i := range p.Spec.Stacks {
		for j := range p.Spec.Stacks[i].Apps {
			a := &p.Spec.Stacks[i].Apps[j]
			out = append(out, compile.AppNamespace(p, a)+"/"+a.Name)
		}
	}
	if b := p.Spec.Bootstrap; b != nil && b.RootApplication != nil {
		out = append(out, p.Spec.ArgoCD.Namespace+"/"+compile.RootApplicationName(p.Metadata.Name))
	}
	sort.Strings(out)
	return out
}

// projects are the Argo CD projects the workflows' account may manage.
func projects(p *spec.Platform) []string {
	set := map[string]bool{}
	add := func(s string) {
		if s == "" {
			s = spec.DefaultProject
		}
		set[s] = true
	}
	add(p.Spec.ArgoCD.Project)
	for _, st := range p.Spec.Stacks {
		for _, a := range st.Apps {
			if a.Project != "" {
				add(a.Project)
			}
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// argocdChartValues are the argo-cd chart values: the spec's, with the health
// customizations (configs.cm) and the workflows' API account (an apiKey
// account and an RBAC role over the platform's projects) merged in.
func argocdChartValues(p *spec.Platform) ([]string, map[string]any, error) {
	hv, err := healthlua.HelmValues(p)
	if err != nil {
		return nil, nil, err
	}
	cm := hv["configs"].(map[string]any)["cm"].(map[string]any)
	keys := make([]string, 0, len(cm))
	for k := range cm {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	cm["accounts."+ArgoCDAccount] = "apiKey"

	role := "role:" + ArgoCDAccount
	var policy []string
	for _, prj := range projects(p) {
		policy = append(policy,
			fmt.Sprintf("p, %s, applications, *, %s/*, allow", role, prj),
			fmt.Sprintf("p, %s, projects, get, %s, allow", role, prj))
	}
	policy = append(policy,
		fmt.Sprintf("p, %s, clusters, get, *, allow", role),
		fmt.Sprintf("p, %s, repositories, get, *, allow", role),
		fmt.Sprintf("g, %s, %s", ArgoCDAccount, role))

	values := deepCopy(p.Spec.Bootstrap.Charts.ArgoCD.Values)
	merge(values, hv)
	configs := values["configs"].(map[string]any)
	rbac, _ := configs["rbac"].(map[string]any)
	if rbac == nil {
		rbac = map[string]any{}
		configs["rbac"] = rbac
	}
	own, _ := rbac["policy.csv"].(string)
	if own != "" && !strings.HasSuffix(own, "\n") {
		own += "\n"
	}
	rbac["policy.csv"] = own + "# deployctl: the workflows' API account\n" + strings.Join(policy, "\n") + "\n"
	return keys, values, nil
}

// merge copies src into dst, recursing into maps present in both.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, sm)
				continue
			}
			dst[k] = deepCopy(sm)
			continue
		}
		dst[k] = v
	}
}

func deepCopy(m map[string]any) map[string]any {
	out := map[string]any{}
	if m == nil {
		return out
	}
	b, _ := json.Marshal(m)
	_ = json.Unmarshal(b, &out)
	return out
}

// renderer executes the embedded templates, keeping the first error.
type renderer struct {
	files map[string][]byte
	err   error
}

var funcs = template.FuncMap{
	// q quotes a value from the spec as a YAML string. Ansible would
	// evaluate Jinja delimiters inside it, so those are refused.
	"q": func(v string) (string, error) {
		if jinjaRe.MatchString(v) {
			return "", fmt.Errorf("%q contains Jinja delimiters, which Ansible would evaluate", v)
		}
		b, err := json.Marshal(v)
		return string(b), err
	},
	// seq renders a block sequence of quoted strings, indented by n spaces,
	// after the key it follows; an empty one is [].
	"seq": func(n int, items []string) (string, error) {
		if len(items) == 0 {
			return " []", nil
		}
		var sb strings.Builder
		for _, it := range items {
			if jinjaRe.MatchString(it) {
				return "", fmt.Errorf("%q contains Jinja delimiters, which Ansible would evaluate", it)
			}
			b, _ := json.Marshal(it)
			sb.WriteString("\n" + strings.Repeat(" ", n) + "- " + string(b))
		}
		return sb.String(), nil
	},
	"var":  varName,
	"join": strings.Join,
}

func (r *renderer) render(out, name string, data any) {
	if r.err != nil {
		return
	}
	src, err := fs.ReadFile(templates.FS, "bootstrap/"+name)
	if err != nil {
		r.err = err
		return
	}
	t, err := template.New(name).Delims("[[", "]]").Funcs(funcs).Option("missingkey=error").Parse(string(src))
	if err != nil {
		r.err = fmt.Errorf("bootstrap template %s: %w", name, err)
		return
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		r.err = fmt.Errorf("bootstrap %s: %w", out, err)
		return
	}
	r.files[out] = buf.Bytes()
}

// values writes a chart values file (read by Helm itself, not templated by
// Ansible).
func (r *renderer) values(out, platform, note string, values map[string]any) {
	if r.err != nil {
		return
	}
	if values == nil {
		values = map[string]any{}
	}
	b, err := yaml.Marshal(values)
	if err != nil {
		r.err = fmt.Errorf("bootstrap %s: %w", out, err)
		return
	}
	r.files[out] = append([]byte("---\n# Generated by deployctl from the platform spec "+platform+"; do not edit.\n# Chart values: "+note+".\n"), b...)
}
