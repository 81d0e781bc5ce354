package spec

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/robfig/cron/v3"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	k8spath "k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The rules of the systems that receive the spec's values: every value is
// checked here against what Kubernetes, Argo CD, Argo Workflows, Argo
// Events, Helm or Git itself accepts for the place it ends up in, so that
// nothing reaches a policy CSV, a label, a name, a newline-separated list or
// a manifest that its receiver would read differently or refuse.

// Bounds of durations. Kubernetes refuses an activeDeadlineSeconds past
// 2^31-1 seconds (about 68 years) and Go durations end at about 292 years;
// the compiler adds sync + health + 2m for a step's deadline. A week per
// timeout keeps every sum far inside both, and a node that may run for
// longer than the week a failed run is kept for resume (ttlAfterFailure)
// is a mistake, not a plan.
const (
	MaxTimeout = 7 * 24 * time.Hour
	MaxBackoff = time.Hour
)

// ReservedLabelPrefix marks deployctl's own labels and annotations; together
// with app.kubernetes.io/managed-by they identify what deployctl generated
// and must not be set (or overridden) by an app.
const ReservedLabelPrefix = "deployctl.dev/"

// UserAnnotations are the deployctl.dev/ annotations a spec may carry:
// information deployctl import writes and deployctl plan reads, never used
// to select or own anything.
var UserAnnotations = map[string]bool{
	"deployctl.dev/sync-wave":      true,
	"deployctl.dev/sync-wave-path": true,
}

func reservedKey(k string) bool {
	return strings.HasPrefix(k, ReservedLabelPrefix) || k == "app.kubernetes.io/managed-by"
}

// CronWorkflowNameMax is the longest CronWorkflow name Argo Workflows
// accepts: it appends "-<unix time>" to the name of each Workflow it starts.
const CronWorkflowNameMax = 52

// ValidateSuffix is what the validate CronWorkflow's name adds to the
// platform name; MaxPlatformName follows from it.
const (
	ValidateSuffix  = "-validate"
	MaxPlatformName = CronWorkflowNameMax - len(ValidateSuffix)
)

var (
	// Argo CD health customization keys: group_kind. A group is a DNS
	// subdomain, a kind an identifier; "_" would split the key wrongly.
	kindRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)
	// Helm chart names (helm lint, chartfile rules).
	chartNameRe = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	// An Argo Events webhook endpoint: a URL path.
	endpointRe = regexp.MustCompile(`^/[A-Za-z0-9._~/-]*$`)
	// Jinja delimiters, which Ansible would evaluate in the bootstrap.
	jinjaRe = regexp.MustCompile(`\{\{|\{%|\{#|\}\}|%\}|#\}`)
	// Argo CD's rule for a multi-source ref (util/argo: sources.ref).
	refRe = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	// Go durations as the schema writes them (no sign, no bare number).
	durationRe = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`)
)

// projectRule names Argo CD's rule for project names (util/argo
// IsValidProjectName): a DNS-1123 subdomain, like every AppProject name.
const projectRule = "Argo CD project name (a DNS-1123 subdomain, as Argo CD's IsValidProjectName)"

// ManualSuffix is the path the webhook's manual trigger adds.
const ManualSuffix = "/manual"

func joinMsgs(msgs []string) string { return strings.Join(msgs, "; ") }

// CheckGroup is the Kubernetes API group rule (empty is the core group).
func CheckGroup(g string) error {
	if g == "" {
		return nil
	}
	if msgs := validation.IsDNS1123Subdomain(g); len(msgs) > 0 {
		return fmt.Errorf("group %q is not a DNS subdomain: %s", g, joinMsgs(msgs))
	}
	return nil
}

// CheckKind is the rule for a kind in an Argo CD health key or a check.
func CheckKind(k string) error {
	if !kindRe.MatchString(k) {
		return fmt.Errorf("kind %q must be letters and digits, starting with a letter", k)
	}
	return nil
}

// CheckLua parses and compiles a health script with gopher-lua, the Lua
// Argo CD embeds.
func CheckLua(script, name string) error {
	if strings.TrimSpace(script) == "" {
		return fmt.Errorf("lua is empty")
	}
	chunk, err := parse.Parse(strings.NewReader(script), name)
	if err == nil {
		_, err = lua.Compile(chunk, name)
	}
	var pe *parse.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pe) && pe.Pos.Line == parse.EOF:
		return fmt.Errorf("Lua does not compile: at the end of the script: %s", pe.Message)
	case errors.As(err, &pe):
		return fmt.Errorf("Lua does not compile: line %d of the script, near %q: %s", pe.Pos.Line, pe.Token, pe.Message)
	}
	return fmt.Errorf("Lua does not compile: %s", strings.TrimSpace(err.Error()))
}

// CheckCron parses a schedule as Argo Workflows' CronWorkflow does (robfig
// cron, standard five fields or a descriptor such as @hourly).
func CheckCron(s string) error {
	if _, err := cron.ParseStandard(s); err != nil {
		return fmt.Errorf("schedule %q does not parse: %w", s, err)
	}
	return nil
}

// CheckWebhookEndpoint is the rule for the Git webhook's endpoint, once
// normalized to one leading and no trailing slash.
func CheckWebhookEndpoint(e string) error {
	switch {
	case !endpointRe.MatchString(e):
		return fmt.Errorf("%q is not a URL path (letters, digits and . _ ~ / -, starting with /)", e)
	case strings.HasSuffix(e, ManualSuffix):
		return fmt.Errorf("%q must not end in %s (the manual trigger's endpoint)", e, ManualSuffix)
	}
	return nil
}

// MaxWebhookSecretName is the longest webhook auth Secret name: Argo
// Events mounts the Secret into the EventSource's pod as the volume
// "secret-<name>", and a volume name is a DNS-1123 label (63 characters).
const MaxWebhookSecretName = validation.DNS1123LabelMaxLength - len("secret-")

// CheckWebhookSecretName is the rule for spec.events.webhook.authSecret's
// name: a Secret name that also makes a valid volume name in Argo Events'
// EventSource pod (a DNS-1123 label, at most MaxWebhookSecretName).
func CheckWebhookSecretName(n string) error {
	if err := k8sName(validation.IsDNS1123Label, "Secret name (it names a volume of the EventSource's pod)", n); err != nil {
		return err
	}
	if len(n) > MaxWebhookSecretName {
		return fmt.Errorf("%q is longer than %d characters: Argo Events mounts it as the volume \"secret-%s\", and a volume name has at most %d", n, MaxWebhookSecretName, n, validation.DNS1123LabelMaxLength)
	}
	return nil
}

// CheckBranch is git check-ref-format's rule for a branch name.
func CheckBranch(b string) error {
	bad := func(why string) error { return fmt.Errorf("%q is not a Git branch name: %s", b, why) }
	switch {
	case b == "" || strings.TrimSpace(b) == "":
		return bad("empty")
	case strings.HasPrefix(b, "-") || strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") || strings.HasSuffix(b, "."):
		return bad("must not start with - or /, nor end with / or .")
	case strings.Contains(b, "..") || strings.Contains(b, "@{") || strings.Contains(b, "//") || b == "@":
		return bad(`must not contain "..", "@{" or "//"`)
	case strings.HasSuffix(b, ".lock") || strings.Contains(b, "/."):
		return bad(`no component may start with "." or end with ".lock"`)
	}
	for _, r := range b {
		if r < 0x20 || r == 0x7f || unicode.IsSpace(r) || strings.ContainsRune(`~^:?*[\`, r) {
			return bad(fmt.Sprintf("must not contain %q", r))
		}
	}
	return nil
}

// checkText refuses control characters and whitespace in a value that is
// one token for its receiver (a URL, a revision, a name).
func checkText(v string) error {
	for _, r := range v {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("%q must not contain whitespace or control characters", v)
		}
	}
	return nil
}

// checkURL requires an absolute URL with one of the schemes.
func checkURL(v string, schemes ...string) error {
	if err := checkText(v); err != nil {
		return err
	}
	u, err := url.Parse(v)
	if err != nil {
		return fmt.Errorf("invalid URL %q: %v", v, err)
	}
	for _, s := range schemes {
		if u.Scheme == s && u.Host != "" {
			return nil
		}
	}
	return fmt.Errorf("invalid URL %q: want %s://HOST…", v, strings.Join(schemes, ":// or "))
}

// checkRepoURL accepts what Argo CD accepts as a repository: a URL with a
// scheme, scp-like Git (git@host:org/repo.git), or an OCI Helm registry
// without scheme (registry.example.com/charts).
func checkRepoURL(v string) error {
	if err := checkText(v); err != nil {
		return err
	}
	if strings.Contains(v, "://") {
		u, err := url.Parse(v)
		if err != nil || u.Host == "" {
			return fmt.Errorf("invalid repository URL %q", v)
		}
	}
	return nil
}

// checkRepoPath is Argo CD's rule for a source path: relative, inside the
// repository (the repo server, util/app/path.Path, refuses absolute and
// escaping paths).
func checkRepoPath(p string) error {
	if path.IsAbs(p) || p == ".." || strings.HasPrefix(path.Clean(p), "../") {
		return fmt.Errorf("%q must be a relative path inside the repository", p)
	}
	return nil
}

// k8sName applies one of Kubernetes' name rules.
// PluginServiceAccount is the executor plugin's own ServiceAccount (plugin
// mode; pkg/compile makes it).
const PluginServiceAccount = "deployctl-executor-plugin"

// pluginServiceAccount: in plugin mode the workflow's ServiceAccount gets a
// legacy token Secret named SA.service-account-token (what Argo reads), and
// must not be the plugin's own.
func pluginServiceAccount(sa string) error {
	if sa == PluginServiceAccount {
		return fmt.Errorf("%q is the executor plugin's own ServiceAccount in plugin mode (it may only read workflows): name the workflows' another", sa)
	}
	if msgs := validation.IsDNS1123Subdomain(sa + ".service-account-token"); len(msgs) > 0 {
		return fmt.Errorf("%q: in plugin mode its token Secret %q must be a valid Secret name: %s", sa, sa+".service-account-token", joinMsgs(msgs))
	}
	return nil
}

func k8sName(rule func(string) []string, what, v string) error {
	if msgs := rule(v); len(msgs) > 0 {
		return fmt.Errorf("%q is not a valid %s: %s", v, what, joinMsgs(msgs))
	}
	return nil
}

// objectName is the rule for names of arbitrary Kubernetes objects (the
// apiserver's minimum: a path segment), without whitespace.
func objectName(v string) []string {
	msgs := k8spath.IsValidPathSegmentName(v)
	if checkText(v) != nil {
		msgs = append(msgs, "must not contain whitespace or control characters")
	}
	return msgs
}

// checkReceivers runs every receiving system's rule on the spec's values.
func (d *Document) checkReceivers(errs *Errors) {
	p := d.Platform
	s := &p.Spec
	add := func(path string, err error) { d.report(errs, path, err) }
	if n := p.Metadata.Name; len(n) > MaxPlatformName {
		add("metadata.name", fmt.Errorf("%q is longer than %d characters: it names the CronWorkflow %q, and Argo Workflows allows %d", n, MaxPlatformName, n+ValidateSuffix, CronWorkflowNameMax))
	}

	// Argo CD.
	if s.ArgoCD.Server != "" {
		add("spec.argocd.server", checkServer(s.ArgoCD.Server))
	}
	if s.ArgoCD.Project != "" {
		add("spec.argocd.project", k8sName(validation.IsDNS1123Subdomain, projectRule, s.ArgoCD.Project))
	}
	for field, ref := range map[string]*SecretKeyRef{"tokenSecret": &s.ArgoCD.TokenSecret, "caSecret": s.ArgoCD.CASecret} {
		if ref == nil {
			continue
		}
		at := "spec.argocd." + field
		if ref.Name != "" {
			add(at+".name", k8sName(validation.IsDNS1123Subdomain, "Secret name", ref.Name))
		}
		if ref.Key != "" {
			add(at+".key", k8sName(validation.IsConfigMapKey, "Secret key", ref.Key))
		}
	}

	// Argo Workflows.
	if sa := s.Workflow.ServiceAccount; sa != "" {
		err := k8sName(validation.IsDNS1123Subdomain, "ServiceAccount name", sa)
		if err == nil && s.Workflow.StepMode.Plugin() {
			err = pluginServiceAccount(sa)
		}
		add("spec.workflow.serviceAccount", err)
	}

	// Defaults and apps.
	if def := s.Defaults.Source; def != nil {
		d.checkSourceValues(errs, "spec.defaults.source", def)
		if s.Events != nil && def.TargetRevision != "" {
			// The events' branch when the webhook names none.
			add("spec.defaults.source.targetRevision", checkText(def.TargetRevision))
		}
	}
	if dst := s.Defaults.Destination; dst != nil {
		d.checkDestination(errs, "spec.defaults.destination", dst)
	}
	for i, st := range s.Stacks {
		for j := range st.Apps {
			a := &st.Apps[j]
			ap := fmt.Sprintf("spec.stacks[%d].apps[%d]", i, j)
			if a.Project != "" {
				add(ap+".project", k8sName(validation.IsDNS1123Subdomain, projectRule, a.Project))
			}
			if a.ApplicationNamespace != "" {
				add(ap+".applicationNamespace", k8sName(validation.IsDNS1123Label, "namespace name", a.ApplicationNamespace))
			}
			if a.Source != nil {
				d.checkSourceValues(errs, ap+".source", a.Source)
			}
			refs, names := map[string]int{}, map[string]int{}
			for k := range a.Sources {
				sp := fmt.Sprintf("%s.sources[%d]", ap, k)
				d.checkSourceValues(errs, sp, &a.Sources[k])
				if n := a.Sources[k].Name; n != "" {
					if prev, dup := names[n]; dup {
						add(sp+".name", fmt.Errorf("name %q is already used by sources[%d]: Argo CD refuses an Application with two sources of one name", n, prev))
					}
					names[n] = k
				}
				if ref := a.Sources[k].Ref; ref != "" {
					if prev, dup := refs[ref]; dup {
						add(sp+".ref", fmt.Errorf("ref %q is already used by sources[%d]: Argo CD needs each ref once", ref, prev))
					}
					refs[ref] = k
				}
			}
			if a.Destination != nil {
				d.checkDestination(errs, ap+".destination", a.Destination)
			}
			// ignoreDifferences: group and kind are Argo CD globs ("*",
			// "apps*"), name and namespace matched as they are, JSON
			// pointers and jq paths read only by Argo CD's diff: Argo CD
			// accepts any string in each, and they reach nothing but the
			// Application (base64 in the workflow), so none is refused.
			d.checkLabels(errs, ap+".labels", a.Labels, true)
			d.checkAnnotations(errs, ap+".annotations", a.Annotations)
			for k, h := range a.HealthChecks {
				d.checkHealthCheck(errs, fmt.Sprintf("%s.healthChecks[%d]", ap, k), h)
			}
		}
	}

	// Argo CD health customizations.
	for i, hc := range s.HealthCustomizations {
		at := fmt.Sprintf("spec.healthCustomizations[%d]", i)
		// A DNS subdomain has no "_", which separates group and kind
		// in the argocd-cm key.
		add(at+".group", CheckGroup(hc.Group))
		if hc.Kind != "" {
			add(at+".kind", CheckKind(hc.Kind))
		}
		if hc.Lua != "" || d.has(at+".lua") {
			add(at+".lua", CheckLua(hc.Lua, at+".lua"))
		}
	}

	// Argo Events.
	if ev := s.Events; ev != nil {
		if ev.EventBus != "" {
			add("spec.events.eventBus", k8sName(validation.IsDNS1123Label, "EventBus name", ev.EventBus))
		}
		if ev.ValidateSchedule != "" || d.has("spec.events.validateSchedule") {
			add("spec.events.validateSchedule", CheckCron(ev.ValidateSchedule))
		}
		if wh := ev.Webhook; wh != nil {
			if wh.Endpoint != "" {
				add("spec.events.webhook.endpoint", CheckWebhookEndpoint("/"+strings.Trim(wh.Endpoint, "/")))
			}
			if wh.Branch != "" || d.has("spec.events.webhook.branch") {
				add("spec.events.webhook.branch", CheckBranch(wh.Branch))
			}
			if ref := wh.AuthSecret; ref != nil {
				if ref.Name != "" {
					add("spec.events.webhook.authSecret.name", CheckWebhookSecretName(ref.Name))
				}
				if ref.Key != "" {
					add("spec.events.webhook.authSecret.key", k8sName(validation.IsConfigMapKey, "Secret key", ref.Key))
				}
			}
		}
	}

	// The Ansible bootstrap: chart coordinates reach Jinja-evaluated YAML.
	if b := s.Bootstrap; b != nil {
		for field, c := range map[string]Chart{"argocd": b.Charts.ArgoCD, "argoWorkflows": b.Charts.ArgoWorkflows, "argoEvents": b.Charts.ArgoEvents, "sealedSecrets": b.Charts.SealedSecrets} {
			at := "spec.bootstrap.charts." + field
			if c.Repo != "" {
				add(at+".repo", checkURL(c.Repo, "https", "http", "oci"))
				if jinjaRe.MatchString(c.Repo) {
					add(at+".repo", fmt.Errorf("%q contains Jinja delimiters, which Ansible would evaluate", c.Repo))
				}
			}
			if c.Chart != "" && !chartNameRe.MatchString(c.Chart) {
				add(at+".chart", fmt.Errorf("%q is not a Helm chart name (letters, digits, '.', '_', '-')", c.Chart))
			}
		}
		if r := b.RootApplication; r != nil {
			// Ansible's YAML too: no control characters.
			if strings.ContainsFunc(r.Path, unicode.IsControl) {
				add("spec.bootstrap.rootApplication.path", fmt.Errorf("%q must not contain control characters", r.Path))
			} else {
				add("spec.bootstrap.rootApplication.path", checkRepoPath(r.Path))
			}
			if r.RepoURL != "" {
				add("spec.bootstrap.rootApplication.repoURL", checkRepoURL(r.RepoURL))
			}
			if r.TargetRevision != "" {
				add("spec.bootstrap.rootApplication.targetRevision", checkText(r.TargetRevision))
			}
		}
	}
}

// checkServer is host:port of the Argo CD API: a DNS name or an IP address
// and a TCP port. It reaches a workflow parameter.
func checkServer(v string) error {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return fmt.Errorf("%q is not host:port: %v", v, err)
	}
	if net.ParseIP(host) == nil && len(validation.IsDNS1123Subdomain(host)) > 0 {
		return fmt.Errorf("host %q is neither a DNS name nor an IP address", host)
	}
	var n int
	if _, err := fmt.Sscanf(port, "%d", &n); err != nil || fmt.Sprint(n) != port || len(validation.IsValidPortNum(n)) > 0 {
		return fmt.Errorf("port %q is not a TCP port (1-65535)", port)
	}
	return nil
}

// checkSourceValues checks one Application source's values (completeness is
// checkSource's business, after defaults).
func (d *Document) checkSourceValues(errs *Errors, at string, s *Source) {
	// repoURL, targetRevision, chart, name and the helm, kustomize,
	// directory and plugin options reach only the Application, which the
	// workflow carries base64-encoded: Argo CD's own rules are the only
	// ones (any string; completeness is checkSource's). The repo server
	// refuses an absolute path or one outside the repository.
	add := func(path string, err error) { d.report(errs, path, err) }
	if s.Path != "" {
		add(at+".path", checkRepoPath(s.Path))
	}
	if s.Ref != "" && !refRe.MatchString(s.Ref) {
		add(at+".ref", fmt.Errorf("ref %q may hold only letters, digits, '_' and '-' (Argo CD)", s.Ref))
	}
	if h := s.Helm; h != nil && h.ReleaseName != "" {
		// Helm's ValidateReleaseName: a DNS-1123 subdomain of at most 53.
		err := k8sName(validation.IsDNS1123Subdomain, "Helm release name", h.ReleaseName)
		if err == nil && len(h.ReleaseName) > 53 {
			err = fmt.Errorf("%q is not a valid Helm release name: at most 53 characters", h.ReleaseName)
		}
		add(at+".helm.releaseName", err)
	}
	if k := s.Kustomize; k != nil {
		// Kustomize puts them on every resource it renders: Kubernetes'
		// label, annotation and namespace rules.
		d.checkLabels(errs, at+".kustomize.commonLabels", k.CommonLabels, false)
		d.checkAnnotationKeys(errs, at+".kustomize.commonAnnotations", k.CommonAnnotations)
		if k.Namespace != "" {
			add(at+".kustomize.namespace", k8sName(validation.IsDNS1123Label, "namespace name", k.Namespace))
		}
	}
	d.checkSourcePaths(errs, at, s)
}

// checkDestination checks an Application destination.
func (d *Document) checkDestination(errs *Errors, at string, dst *Destination) {
	add := func(path string, err error) { d.report(errs, path, err) }
	if dst.Namespace != "" {
		add(at+".namespace", k8sName(validation.IsDNS1123Label, "namespace name", dst.Namespace))
	}
	if dst.Server != "" {
		// Argo CD refuses a server it has no cluster for; every cluster
		// it registers (argocd cluster add, cluster Secrets) is a URL.
		add(at+".server", checkURL(dst.Server, "https", "http"))
	}
	if dst.Server != "" && dst.Name != "" {
		add(at, fmt.Errorf("set either server or name, not both (Argo CD refuses an Application with both)"))
	}
}

// checkLabels applies Kubernetes' label rules; own says the labels go on
// deployctl's own Application, where deployctl's keys are reserved.
func (d *Document) checkLabels(errs *Errors, at string, labels map[string]string, own bool) {
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		kp := at + "." + k
		if own && reservedKey(k) {
			*errs = append(*errs, d.At(kp, "label %q is reserved: deployctl sets it on what it generates and finds its objects by it", k))
			continue
		}
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			*errs = append(*errs, d.At(kp, "label key %q is not valid: %s", k, joinMsgs(msgs)))
		}
		if msgs := validation.IsValidLabelValue(labels[k]); len(msgs) > 0 {
			*errs = append(*errs, d.At(kp, "label value %q is not valid: %s", labels[k], joinMsgs(msgs)))
		}
	}
}

// checkAnnotations applies Kubernetes' annotation rules and the reserved
// prefix.
func (d *Document) checkAnnotations(errs *Errors, at string, ann map[string]string) {
	own := map[string]string{}
	for k, v := range ann {
		if reservedKey(k) && !UserAnnotations[k] {
			*errs = append(*errs, d.At(at+"."+k, "annotation %q is reserved for deployctl", k))
			continue
		}
		own[k] = v
	}
	d.checkAnnotationKeys(errs, at, own)
	if u, ok := ann[managedByURL]; ok && u != "" {
		// Argo CD's create (util/argo ValidateManagedByURL, through
		// settings.ValidateExternalURL): an http or https URL.
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") {
			*errs = append(*errs, d.At(at+"."+managedByURL, "%q is not an http or https URL: Argo CD refuses the Application (invalid managed-by URL)", u))
		}
	}
}

// managedByURL is Argo CD's annotation naming the Argo CD that manages an
// Application.
const managedByURL = "argocd.argoproj.io/managed-by-url"

// checkAnnotationKeys is Kubernetes' rule for annotations (ValidateAnnotations:
// qualified-name keys, compared in lower case, 256 KiB in all).
func (d *Document) checkAnnotationKeys(errs *Errors, at string, ann map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(ann)) {
		if msgs := validation.IsQualifiedName(strings.ToLower(k)); len(msgs) > 0 {
			*errs = append(*errs, d.At(at+"."+k, "annotation key %q is not valid: %s", k, joinMsgs(msgs)))
		}
	}
	if el := apivalidation.ValidateAnnotationsSize(ann); el != nil {
		*errs = append(*errs, d.At(at, "annotations total more than %d bytes (Kubernetes' limit)", apivalidation.TotalAnnotationSizeLimitB))
	}
}

// checkHealthCheck checks the values that become one line of the step's
// CHECK list (resource:GROUP/KIND/NAMESPACE/NAME or http:URL=CODES).
func (d *Document) checkHealthCheck(errs *Errors, at string, h HealthCheck) {
	add := func(path string, err error) { d.report(errs, path, err) }
	if r := h.Resource; r != nil {
		add(at+".resource.group", CheckGroup(r.Group))
		if r.Kind != "" {
			add(at+".resource.kind", CheckKind(r.Kind))
		}
		if r.Namespace != "" {
			add(at+".resource.namespace", k8sName(validation.IsDNS1123Label, "namespace name", r.Namespace))
		}
		if r.Name != "" {
			add(at+".resource.name", k8sName(objectName, "Kubernetes object name", r.Name))
		}
	}
	if u := h.HTTP; u != nil && u.URL != "" {
		add(at+".http.url", checkURL(u.URL, "http", "https"))
	}
}

// report adds err, if any, located at a field path.
func (d *Document) report(errs *Errors, path string, err error) {
	if err != nil {
		*errs = append(*errs, d.At(path, "%s", err.Error()))
	}
}
