// Package spec holds the platform DAG spec: its Go types, the strict loader
// that keeps the line of every field, and the semantic validation.
//
// The types mirror schema/platform.schema.json field for field; the schema is
// checked first (it yields exact paths for type errors and unknown fields),
// these structs are filled only from a document the schema accepted.
package spec

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// APIVersion and Kind identify a platform spec document.
const (
	APIVersion = "deployctl.dev/v1alpha1"
	Kind       = "Platform"
)

// Platform is one spec file.
type Platform struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Metadata   Metadata     `json:"metadata"`
	Spec       PlatformSpec `json:"spec"`
}

// Metadata names the platform; the name prefixes every generated object.
type Metadata struct {
	Name string `json:"name"`
}

// PlatformSpec is everything below spec:.
type PlatformSpec struct {
	ArgoCD               ArgoCD                `json:"argocd"`
	Workflow             Workflow              `json:"workflow"`
	Defaults             Defaults              `json:"defaults,omitempty"`
	Stacks               []Stack               `json:"stacks"`
	HealthCustomizations []HealthCustomization `json:"healthCustomizations,omitempty"`
	HealthOptions        HealthOptions         `json:"healthOptions,omitempty"`
	Events               *Events               `json:"events,omitempty"`
	Bootstrap            *Bootstrap            `json:"bootstrap,omitempty"`
}

// ArgoCD says where the Argo CD API is and how the in-step binary reaches it.
type ArgoCD struct {
	Namespace string `json:"namespace"`
	// Server is host:port of the Argo CD API (argocd-server).
	Server  string `json:"server"`
	Project string `json:"project,omitempty"`
	// Plaintext talks HTTP instead of HTTPS (argocd-server --insecure).
	Plaintext bool `json:"plaintext,omitempty"`
	// InsecureSkipVerify accepts any server certificate. Off by default.
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
	// RootPath is argocd-server's --rootpath, if any.
	RootPath string `json:"rootPath,omitempty"`
	// TokenSecret is the Secret (in the workflow namespace) holding the Argo
	// CD API token; it is mounted into step pods as a file.
	TokenSecret SecretKeyRef `json:"tokenSecret,omitempty"`
	// CASecret optionally holds the CA bundle for the Argo CD server's TLS.
	CASecret *SecretKeyRef `json:"caSecret,omitempty"`
}

// SecretKeyRef names one key of one Secret.
type SecretKeyRef struct {
	Name string `json:"name,omitempty"`
	Key  string `json:"key,omitempty"`
}

// Workflow configures the generated Argo Workflows objects.
type Workflow struct {
	Namespace      string `json:"namespace"`
	ServiceAccount string `json:"serviceAccount"`
	// Image is the in-step image, by tag or digest.
	Image           string `json:"image"`
	ImagePullPolicy string `json:"imagePullPolicy,omitempty"`
	Parallelism     int    `json:"parallelism,omitempty"`
	// StepMode is how a node's step runs: StepModePod (one pod per node,
	// the zero value) or StepModePlugin (Argo's executor plugin, one
	// agent pod per run).
	StepMode StepMode `json:"stepMode,omitempty"`
}

// StepMode is spec.workflow.stepMode. Its zero value is StepModePod, the
// default, and a spec that spells it out ("pod") decodes to the same
// value: both compile (and hash) alike, with nothing to normalize later.
type StepMode string

// Step modes.
const (
	StepModePod    StepMode = ""
	StepModePlugin StepMode = "plugin"
)

// stepModePod is how a spec spells StepModePod.
const stepModePod = "pod"

// Plugin reports whether steps run in the executor plugin.
func (m StepMode) Plugin() bool { return m == StepModePlugin }

// String is the mode as a spec spells it.
func (m StepMode) String() string {
	if m == StepModePod {
		return stepModePod
	}
	return string(m)
}

// UnmarshalJSON reads "pod" as StepModePod; any other text is kept as it
// is, for the schema's rule to name (its enum: pod, plugin).
func (m *StepMode) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*m = StepMode(s)
	if s == stepModePod {
		*m = StepModePod
	}
	return nil
}

// Defaults apply to every app that does not say otherwise.
type Defaults struct {
	Source      *Source      `json:"source,omitempty"`
	Destination *Destination `json:"destination,omitempty"`
	Timeouts    *Timeouts    `json:"timeouts,omitempty"`
	Retry       *Retry       `json:"retry,omitempty"`
	SyncOptions []string     `json:"syncOptions,omitempty"`
	SyncPolicy  *SyncPolicy  `json:"syncPolicy,omitempty"`
}

// Timeouts bound one node: the sync operation, then the wait for health.
type Timeouts struct {
	Sync   Duration `json:"sync,omitempty"`
	Health Duration `json:"health,omitempty"`
}

// Retry is the retry policy for transient step failures (Argo retryStrategy).
type Retry struct {
	Limit      int      `json:"limit"`
	Backoff    Duration `json:"backoff,omitempty"`
	Factor     int      `json:"factor,omitempty"`
	MaxBackoff Duration `json:"maxBackoff,omitempty"`
}

// SyncPolicy is the Application's steady-state policy once created. The
// orchestration syncs explicitly either way; automated sync only matters
// after the node's turn, for Phase 3 drift correction.
type SyncPolicy struct {
	Automated *Automated `json:"automated,omitempty"`
	// Retry is Argo CD's own retry of a failed sync (the Application's
	// syncPolicy.retry), not the workflow step's retry (App.Retry).
	Retry *SyncRetry `json:"retry,omitempty"`
	// ManagedNamespaceMetadata is put on the destination namespace Argo CD
	// creates (sync option CreateNamespace=true): Pod Security labels, say.
	ManagedNamespaceMetadata *ManagedNamespaceMetadata `json:"managedNamespaceMetadata,omitempty"`
}

// Automated mirrors Argo CD's automated sync policy.
type Automated struct {
	Prune    bool `json:"prune,omitempty"`
	SelfHeal bool `json:"selfHeal,omitempty"`
	// AllowEmpty lets an automated sync prune the app down to no resources.
	AllowEmpty bool `json:"allowEmpty,omitempty"`
	// Enabled false turns automated sync off and keeps the options above
	// (Argo CD 3.1+); absent or true is on.
	Enabled *bool `json:"enabled,omitempty"`
}

// SyncRetry mirrors Argo CD's RetryStrategy: limit (a negative one retries
// without end) and the backoff between attempts.
type SyncRetry struct {
	Limit   int64        `json:"limit,omitempty"`
	Backoff *SyncBackoff `json:"backoff,omitempty"`
	// Refresh makes a retry sync the latest revision instead of the one
	// the failed sync started with (Argo CD 3.2+).
	Refresh bool `json:"refresh,omitempty"`
}

// SyncBackoff mirrors Argo CD's Backoff. Durations are Argo CD's: a Go
// duration ("5s", "3m") or a number of seconds ("30").
type SyncBackoff struct {
	Duration    string `json:"duration,omitempty"`
	Factor      *int64 `json:"factor,omitempty"`
	MaxDuration string `json:"maxDuration,omitempty"`
}

// ManagedNamespaceMetadata mirrors Argo CD's: labels and annotations of the
// namespace it creates.
type ManagedNamespaceMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Stack is a group of apps; stack-level dependsOn means every app of the
// stack waits for every app of the named stacks (through one join node).
type Stack struct {
	Name      string   `json:"name"`
	DependsOn []string `json:"dependsOn,omitempty"`
	Apps      []App    `json:"apps"`
}

// App is one Argo CD Application and one node of the DAG.
type App struct {
	Name      string   `json:"name"`
	DependsOn []string `json:"dependsOn,omitempty"`
	// ApplicationNamespace is the namespace of the Application object
	// itself (Argo CD's apps in any namespace); "" is spec.argocd.namespace.
	// Not the destination namespace, where the app's resources go.
	ApplicationNamespace string             `json:"applicationNamespace,omitempty"`
	Project              string             `json:"project,omitempty"`
	Source               *Source            `json:"source,omitempty"`
	Sources              []Source           `json:"sources,omitempty"`
	Destination          *Destination       `json:"destination,omitempty"`
	SyncOptions          []string           `json:"syncOptions,omitempty"`
	SyncPolicy           *SyncPolicy        `json:"syncPolicy,omitempty"`
	IgnoreDifferences    []IgnoreDifference `json:"ignoreDifferences,omitempty"`
	Labels               map[string]string  `json:"labels,omitempty"`
	Annotations          map[string]string  `json:"annotations,omitempty"`
	Timeouts             *Timeouts          `json:"timeouts,omitempty"`
	Retry                *Retry             `json:"retry,omitempty"`
	HealthChecks         []HealthCheck      `json:"healthChecks,omitempty"`
	AllowSuspended       bool               `json:"allowSuspended,omitempty"`
	// Info is the Application's spec.info: name/value pairs Argo CD shows.
	Info []Info `json:"info,omitempty"`
	// RevisionHistoryLimit is how many synced revisions Argo CD keeps
	// (its default: 10).
	RevisionHistoryLimit *int64 `json:"revisionHistoryLimit,omitempty"`
}

// Info mirrors one entry of an Application's spec.info.
type Info struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Source is an Application source: a Git path, a Helm chart or a plugin.
// Every field is Argo CD's (v3.6's ApplicationSource), with its name and
// shape, so pkg/compile and the import convert them by their JSON.
type Source struct {
	RepoURL        string     `json:"repoURL,omitempty"`
	TargetRevision string     `json:"targetRevision,omitempty"`
	Path           string     `json:"path,omitempty"`
	Chart          string     `json:"chart,omitempty"`
	Ref            string     `json:"ref,omitempty"`
	Name           string     `json:"name,omitempty"`
	Helm           *Helm      `json:"helm,omitempty"`
	Kustomize      *Kustomize `json:"kustomize,omitempty"`
	Directory      *Directory `json:"directory,omitempty"`
	Plugin         *Plugin    `json:"plugin,omitempty"`
	// TagPrefix filters the tags a semver targetRevision is resolved
	// against (Argo CD 3.5+).
	TagPrefix string `json:"tagPrefix,omitempty"`
}

// Helm mirrors the Application's helm source options.
type Helm struct {
	ReleaseName    string              `json:"releaseName,omitempty"`
	ValueFiles     []string            `json:"valueFiles,omitempty"`
	Values         string              `json:"values,omitempty"`
	ValuesObject   map[string]any      `json:"valuesObject,omitempty"`
	Parameters     []HelmParameter     `json:"parameters,omitempty"`
	FileParameters []HelmFileParameter `json:"fileParameters,omitempty"`
	// Version is the Helm major version Argo CD runs ("v3").
	Version         string `json:"version,omitempty"`
	PassCredentials bool   `json:"passCredentials,omitempty"`
	// IgnoreMissingValueFiles skips valueFiles that do not exist.
	IgnoreMissingValueFiles bool `json:"ignoreMissingValueFiles,omitempty"`
	// SkipCrds is Helm's --skip-crds.
	SkipCrds             bool     `json:"skipCrds,omitempty"`
	SkipTests            bool     `json:"skipTests,omitempty"`
	SkipSchemaValidation bool     `json:"skipSchemaValidation,omitempty"`
	Namespace            string   `json:"namespace,omitempty"`
	KubeVersion          string   `json:"kubeVersion,omitempty"`
	APIVersions          []string `json:"apiVersions,omitempty"`
}

// HelmParameter is one --set.
type HelmParameter struct {
	Name        string `json:"name,omitempty"`
	Value       string `json:"value,omitempty"`
	ForceString bool   `json:"forceString,omitempty"`
}

// HelmFileParameter is one --set-file.
type HelmFileParameter struct {
	Name string `json:"name,omitempty"`
	Path string `json:"path,omitempty"`
}

// Kustomize mirrors the Application's kustomize source options.
type Kustomize struct {
	NamePrefix                string             `json:"namePrefix,omitempty"`
	NameSuffix                string             `json:"nameSuffix,omitempty"`
	Images                    []string           `json:"images,omitempty"`
	CommonLabels              map[string]string  `json:"commonLabels,omitempty"`
	Version                   string             `json:"version,omitempty"`
	CommonAnnotations         map[string]string  `json:"commonAnnotations,omitempty"`
	ForceCommonLabels         bool               `json:"forceCommonLabels,omitempty"`
	ForceCommonAnnotations    bool               `json:"forceCommonAnnotations,omitempty"`
	Namespace                 string             `json:"namespace,omitempty"`
	CommonAnnotationsEnvsubst bool               `json:"commonAnnotationsEnvsubst,omitempty"`
	Replicas                  []KustomizeReplica `json:"replicas,omitempty"`
	// Patches are Kustomize patches Argo CD adds to the kustomization.
	Patches              []KustomizePatch `json:"patches,omitempty"`
	Components           []string         `json:"components,omitempty"`
	LabelWithoutSelector bool             `json:"labelWithoutSelector,omitempty"`
	KubeVersion          string           `json:"kubeVersion,omitempty"`
	APIVersions          []string         `json:"apiVersions,omitempty"`
	// IgnoreMissingComponents skips components that do not exist.
	IgnoreMissingComponents bool `json:"ignoreMissingComponents,omitempty"`
	// LabelIncludeTemplates puts commonLabels on resource templates too.
	LabelIncludeTemplates bool `json:"labelIncludeTemplates,omitempty"`
}

// KustomizeReplica sets the replicas of one workload; count is a number or
// a string of digits, as Argo CD takes it.
type KustomizeReplica struct {
	Name  string             `json:"name"`
	Count intstr.IntOrString `json:"count"`
}

// KustomizePatch mirrors Argo CD's (and Kustomize's) patch: a file (path)
// or inline text (patch), the resources it targets, and its options
// (allowNameChange, allowKindChange).
type KustomizePatch struct {
	Path    string             `json:"path,omitempty"`
	Patch   string             `json:"patch,omitempty"`
	Target  *KustomizeSelector `json:"target,omitempty"`
	Options map[string]bool    `json:"options,omitempty"`
}

// KustomizeSelector selects the resources a patch applies to.
type KustomizeSelector struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Name               string `json:"name,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
}

// Directory mirrors the Application's plain-directory source options.
type Directory struct {
	Recurse bool     `json:"recurse,omitempty"`
	Include string   `json:"include,omitempty"`
	Exclude string   `json:"exclude,omitempty"`
	Jsonnet *Jsonnet `json:"jsonnet,omitempty"`
	// DisableExtensionFilter renders every file include/exclude select,
	// not only *.yaml, *.yml, *.json, *.jsonnet (Argo CD 3.6+).
	DisableExtensionFilter bool `json:"disableExtensionFilter,omitempty"`
}

// Jsonnet mirrors the directory source's jsonnet options.
type Jsonnet struct {
	ExtVars []JsonnetVar `json:"extVars,omitempty"`
	TLAs    []JsonnetVar `json:"tlas,omitempty"`
	Libs    []string     `json:"libs,omitempty"`
}

// JsonnetVar is one external variable or top-level argument.
type JsonnetVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Code  bool   `json:"code,omitempty"`
}

// Plugin mirrors the Application's config management plugin source.
type Plugin struct {
	Name       string            `json:"name,omitempty"`
	Env        []EnvEntry        `json:"env,omitempty"`
	Parameters []PluginParameter `json:"parameters,omitempty"`
}

// EnvEntry is one variable of a plugin's environment.
type EnvEntry struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// PluginParameter is one plugin parameter: a string, a map or an array.
type PluginParameter struct {
	Name   string            `json:"name,omitempty"`
	String *string           `json:"string,omitempty"`
	Map    map[string]string `json:"map,omitempty"`
	Array  []string          `json:"array,omitempty"`
}

// Destination is where the Application deploys to.
type Destination struct {
	Server    string `json:"server,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// IgnoreDifference mirrors Argo CD's ResourceIgnoreDifferences.
type IgnoreDifference struct {
	Group                 string   `json:"group,omitempty"`
	Kind                  string   `json:"kind"`
	Name                  string   `json:"name,omitempty"`
	Namespace             string   `json:"namespace,omitempty"`
	JSONPointers          []string `json:"jsonPointers,omitempty"`
	JQPathExpressions     []string `json:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// HealthCheck is an extra readiness probe beyond Argo CD's app health
// (docs/requirements.md#inv-7-health-verification-accuracy): exactly one of Resource or HTTP.
type HealthCheck struct {
	Resource *ResourceCheck `json:"resource,omitempty"`
	HTTP     *HTTPCheck     `json:"http,omitempty"`
}

// ResourceCheck requires one resource of the app's tree to be Healthy.
type ResourceCheck struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// HTTPCheck requires an endpoint to answer with one of the expected codes.
type HTTPCheck struct {
	URL          string `json:"url"`
	ExpectStatus []int  `json:"expectStatus,omitempty"`
}

// HealthCustomization is extra argocd-cm health Lua for one group/kind.
type HealthCustomization struct {
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	Lua   string `json:"lua"`
}

// HealthOptions tune the built-in health customizations.
type HealthOptions struct {
	// CephAcceptHealthWarn treats HEALTH_WARN as Healthy (small clusters).
	CephAcceptHealthWarn bool `json:"cephAcceptHealthWarn,omitempty"`
}

// Events configures the Argo Events wiring and the steady-state validate.
type Events struct {
	EventBus string `json:"eventBus,omitempty"`
	// Webhook is the Git webhook the EventSource listens on.
	Webhook *Webhook `json:"webhook,omitempty"`
	// ValidateSchedule is the cron schedule of the validate CronWorkflow.
	ValidateSchedule string `json:"validateSchedule,omitempty"`
}

// Webhook is an Argo Events webhook endpoint.
type Webhook struct {
	Port     int    `json:"port,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	// Branch is the ref whose pushes trigger a deploy.
	Branch string `json:"branch,omitempty"`
	// AuthSecret is the Secret, in the workflow namespace, whose key holds
	// the bearer token both endpoints require (`Authorization: Bearer
	// <token>`); default DefaultWebhookSecret, key DefaultWebhookKey.
	AuthSecret *SecretKeyRef `json:"authSecret,omitempty"`
}

// WebhookAuthSecret is the effective spec.events.webhook.authSecret,
// defaults applied (e may be nil).
func (e *Events) WebhookAuthSecret() SecretKeyRef {
	ref := SecretKeyRef{Name: DefaultWebhookSecret, Key: DefaultWebhookKey}
	if e != nil && e.Webhook != nil && e.Webhook.AuthSecret != nil {
		if e.Webhook.AuthSecret.Name != "" {
			ref.Name = e.Webhook.AuthSecret.Name
		}
		if e.Webhook.AuthSecret.Key != "" {
			ref.Key = e.Webhook.AuthSecret.Key
		}
	}
	return ref
}

// Bootstrap is Phase 1, generated as Ansible.
type Bootstrap struct {
	Charts          Charts           `json:"charts"`
	RootApplication *RootApplication `json:"rootApplication,omitempty"`
}

// Charts pins the Helm chart of each bootstrap component.
type Charts struct {
	ArgoCD        Chart `json:"argocd"`
	ArgoWorkflows Chart `json:"argoWorkflows"`
	ArgoEvents    Chart `json:"argoEvents"`
	SealedSecrets Chart `json:"sealedSecrets"`
}

// Chart is one pinned Helm chart.
type Chart struct {
	Repo    string         `json:"repo"`
	Chart   string         `json:"chart"`
	Version string         `json:"version"`
	Values  map[string]any `json:"values,omitempty"`
}

// RootApplication is the GitOps handoff Application.
type RootApplication struct {
	Path           string `json:"path"`
	RepoURL        string `json:"repoURL,omitempty"`
	TargetRevision string `json:"targetRevision,omitempty"`
	Automated      bool   `json:"automated,omitempty"`
}
