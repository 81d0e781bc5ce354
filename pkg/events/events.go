// Package events generates the Argo Events wiring and the steady-state
// validation of a platform, into generated/<platform>/events/:
//
//   - eventbus.yaml: the JetStream EventBus the EventSource and Sensor use
//     (spec.events.eventBus, default "default");
//   - eventsource.yaml: one webhook EventSource with two endpoints, the Git
//     push webhook (spec.events.webhook, default port 12000, endpoint /push)
//     and a manual trigger (<endpoint>/manual), both answering only a
//     request with `Authorization: Bearer <token>`, the token being the
//     key of spec.events.webhook.authSecret (default Secret
//     deployctl-webhook-token, key token) that Argo Events mounts into the
//     EventSource's pod;
//   - sensor.yaml: a Sensor that creates a Workflow from the platform's
//     deploy WorkflowTemplate (<platform>-deploy) when the watched branch is
//     pushed, or when the manual endpoint is called;
//   - sensor-rbac.yaml: the Sensor's ServiceAccount and a Role that may only
//     create Workflows in the workflow namespace;
//   - validate-cronworkflow.yaml: a CronWorkflow <platform>-validate that runs
//     the <platform>-validate WorkflowTemplate on spec.events.validateSchedule
//     (default every 15 minutes), never two at once (RFC 6.4, docs/requirements.md#rfc-64-phase-3-steady-state);
//   - kustomization.yaml.
//
// Everything lives in the workflow namespace (spec.workflow.namespace). Every
// pod runs as non-root with a read-only root file system, no capabilities
// and the RuntimeDefault seccomp profile.
package events

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	aev1 "github.com/argoproj/argo-events/pkg/apis/events/v1alpha1"
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/pkg/manifest"
	"github.com/deployctl/deployctl/pkg/spec"
)

// Defaults for an unset spec.events.
const (
	DefaultEventBus         = "default"
	DefaultPort             = 12000
	DefaultEndpoint         = "/push"
	DefaultBranch           = "main"
	DefaultValidateSchedule = "*/15 * * * *"
	// JetStreamVersion is the NATS JetStream version of the generated
	// EventBus; it must be listed in the Argo Events controller's config
	// (the argo-events chart lists it).
	JetStreamVersion = "2.10.10"
)

// Event names inside the EventSource, and the Sensor's dependency names.
const (
	EventGit         = "git"
	EventManual      = "manual"
	DependencyGit    = "git-push"
	DependencyManual = "manual"
	manualSuffix     = spec.ManualSuffix
	runAsID          = int64(65532)
)

// File names written into generated/<platform>/events/.
const (
	FileEventBus      = "eventbus.yaml"
	FileEventSource   = "eventsource.yaml"
	FileSensor        = "sensor.yaml"
	FileSensorRBAC    = "sensor-rbac.yaml"
	FileCronWorkflow  = "validate-cronworkflow.yaml"
	FileKustomization = "kustomization.yaml"
)

// Labels on what this package generates and on the Workflows it creates; the
// same keys the compiler puts on its WorkflowTemplates.
const (
	LabelPlatform  = "deployctl.dev/platform"
	LabelAction    = "deployctl.dev/action"
	LabelTrigger   = "deployctl.dev/trigger"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	managedBy      = "deployctl"
)

// Settings are the effective events settings of a platform, defaults
// applied.
type Settings struct {
	Namespace        string
	EventBus         string
	Port             int
	Endpoint         string
	ManualEndpoint   string
	Branch           string
	ValidateSchedule string
	// AuthSecret holds the bearer token of both webhook endpoints.
	AuthSecret spec.SecretKeyRef
}

// Names of the generated objects.
type Names struct {
	EventSource, Sensor, ServiceAccount, Role string
	CronWorkflow                              string
	DeployTemplate, ValidateTemplate          string
}

// ObjectNames returns the names of a platform's events objects.
func ObjectNames(platform string) Names {
	return Names{
		EventSource:      platform + "-git",
		Sensor:           platform + "-deploy",
		ServiceAccount:   platform + "-sensor",
		Role:             platform + "-sensor-create-workflows",
		CronWorkflow:     platform + "-validate",
		DeployTemplate:   platform + "-deploy",
		ValidateTemplate: platform + "-validate",
	}
}

// Resolve applies the defaults to spec.events and checks the result.
func Resolve(p *spec.Platform) (Settings, error) {
	s := Settings{
		Namespace:        p.Spec.Workflow.Namespace,
		EventBus:         DefaultEventBus,
		Port:             DefaultPort,
		Endpoint:         DefaultEndpoint,
		ValidateSchedule: DefaultValidateSchedule,
		Branch:           DefaultBranch,
	}
	if src := p.Spec.Defaults.Source; src != nil && src.TargetRevision != "" && src.TargetRevision != "HEAD" {
		s.Branch = src.TargetRevision
	}
	if ev := p.Spec.Events; ev != nil {
		if ev.EventBus != "" {
			s.EventBus = ev.EventBus
		}
		if ev.ValidateSchedule != "" {
			s.ValidateSchedule = ev.ValidateSchedule
		}
		if wh := ev.Webhook; wh != nil {
			if wh.Port != 0 {
				s.Port = wh.Port
			}
			if wh.Endpoint != "" {
				s.Endpoint = wh.Endpoint
			}
			if wh.Branch != "" {
				s.Branch = wh.Branch
			}
		}
	}
	s.AuthSecret = p.Spec.Events.WebhookAuthSecret()
	s.Endpoint = "/" + strings.Trim(s.Endpoint, "/")
	s.ManualEndpoint = strings.TrimSuffix(s.Endpoint, "/") + manualSuffix

	// The spec's validation applies the same rules with file and line
	// (spec.CheckWebhookEndpoint, CheckCron, MaxPlatformName); these
	// guard a Platform built in code.
	switch {
	case s.Namespace == "":
		return s, fmt.Errorf("spec.workflow.namespace is required for the events")
	case s.Port < 1 || s.Port > 65535:
		return s, fmt.Errorf("spec.events.webhook.port %d is not a TCP port", s.Port)
	case strings.TrimSpace(s.Branch) == "":
		return s, fmt.Errorf("spec.events.webhook.branch is empty")
	}
	if err := spec.CheckWebhookEndpoint(s.Endpoint); err != nil {
		return s, fmt.Errorf("spec.events.webhook.endpoint: %w", err)
	}
	if err := spec.CheckWebhookSecretName(s.AuthSecret.Name); err != nil {
		return s, fmt.Errorf("spec.events.webhook.authSecret.name: %w", err)
	}
	if err := spec.CheckCron(s.ValidateSchedule); err != nil {
		return s, fmt.Errorf("spec.events.validateSchedule: %w", err)
	}
	if n := ObjectNames(p.Metadata.Name).CronWorkflow; len(n) > spec.CronWorkflowNameMax {
		return s, fmt.Errorf("CronWorkflow name %q is longer than %d characters: shorten metadata.name", n, spec.CronWorkflowNameMax)
	}
	return s, nil
}

// BranchFilter is the regular expression the Sensor matches body.ref
// against (Argo Events treats string filter values as regular expressions).
func BranchFilter(branch string) string {
	return "^" + regexp.QuoteMeta("refs/heads/"+branch) + "$"
}

// Generate returns generated/<platform>/events/, relative to that folder.
func Generate(p *spec.Platform) (map[string][]byte, error) {
	s, err := Resolve(p)
	if err != nil {
		return nil, err
	}
	n := ObjectNames(p.Metadata.Name)
	sn, err := sensor(p, s, n)
	if err != nil {
		return nil, err
	}
	objs := map[string][]any{
		FileEventBus:     {eventBus(p, s)},
		FileEventSource:  {eventSource(p, s, n)},
		FileSensor:       {sn},
		FileSensorRBAC:   sensorRBAC(p, s, n),
		FileCronWorkflow: {validateCron(p, s, n)},
	}
	header := "# Generated by deployctl from the platform spec " + p.Metadata.Name + "; do not edit.\n"
	files := map[string][]byte{}
	var resources []string
	for name, list := range objs {
		var docs []string
		for _, o := range list {
			b, err := Marshal(o)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			docs = append(docs, string(b))
		}
		files[name] = []byte(header + strings.Join(docs, "---\n"))
		resources = append(resources, name)
	}
	sort.Strings(resources)
	kust, err := yaml.Marshal(map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1",
		"kind":       "Kustomization",
		"resources":  resources,
	})
	if err != nil {
		return nil, err
	}
	files[FileKustomization] = append([]byte(header), kust...)
	return files, nil
}

func labels(p *spec.Platform, action string) map[string]string {
	l := map[string]string{LabelPlatform: p.Metadata.Name, LabelManagedBy: managedBy}
	if action != "" {
		l[LabelAction] = action
	}
	return l
}

func meta(p *spec.Platform, s Settings, name, action string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: labels(p, action)}
}

// PodSecurity is the pod security context of every generated pod.
func PodSecurity() *corev1.PodSecurityContext {
	id := runAsID
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr(true),
		RunAsUser:      &id,
		RunAsGroup:     &id,
		FSGroup:        &id,
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// ContainerSecurity is the container security context of every generated
// container.
func ContainerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr(true),
		ReadOnlyRootFilesystem:   ptr(true),
		AllowPrivilegeEscalation: ptr(false),
		Privileged:               ptr(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// podTemplate is the Argo Events pod template: hardened. No /tmp volume:
// Argo Events' controller (v1.9, reconciler/eventsource and sensor
// resource.go) gives every EventSource and Sensor pod its own emptyDir
// "tmp" at /tmp, so the read-only root file system has a writable /tmp; a
// second one made the Deployment invalid ("Duplicate value: tmp", seen on
// the bootstrapped e2e cluster: no EventSource or Sensor pod ever started).
func podTemplate(serviceAccount string) *aev1.Template {
	return &aev1.Template{
		ServiceAccountName: serviceAccount,
		SecurityContext:    PodSecurity(),
		Container:          &aev1.Container{SecurityContext: ContainerSecurity()},
	}
}

func eventBus(p *spec.Platform, s Settings) *aev1.EventBus {
	hardened := func() *aev1.ContainerTemplate { return &aev1.ContainerTemplate{SecurityContext: ContainerSecurity()} }
	return &aev1.EventBus{
		TypeMeta:   metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "EventBus"},
		ObjectMeta: meta(p, s, s.EventBus, ""),
		Spec: aev1.EventBusSpec{JetStream: &aev1.JetStreamBus{
			Version:                   JetStreamVersion,
			SecurityContext:           PodSecurity(),
			ContainerTemplate:         hardened(),
			ReloaderContainerTemplate: hardened(),
			MetricsContainerTemplate:  hardened(),
		}},
	}
}

// webhook is one endpoint. AuthSecret: Argo Events (v1.9,
// pkg/eventsources/common/webhook) answers 401 unless the request's
// Authorization header is "Bearer " followed by the Secret key's value
// (one trailing newline of the value ignored), before it reads the body;
// it mounts the Secret as the pod's volume "secret-<name>" (so the pod does
// not start before the Secret exists) and reads the file on every request
// (a rotated token applies without a restart).
func webhook(s Settings, endpoint string) aev1.WebhookEventSource {
	return aev1.WebhookEventSource{WebhookContext: aev1.WebhookContext{
		Endpoint: endpoint,
		Method:   "POST",
		Port:     strconv.Itoa(s.Port),
		AuthSecret: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: s.AuthSecret.Name},
			Key:                  s.AuthSecret.Key,
		},
	}}
}

func eventSource(p *spec.Platform, s Settings, n Names) *aev1.EventSource {
	return &aev1.EventSource{
		TypeMeta:   metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "EventSource"},
		ObjectMeta: meta(p, s, n.EventSource, ""),
		Spec: aev1.EventSourceSpec{
			EventBusName: s.EventBus,
			Template:     podTemplate(""),
			Service: &aev1.Service{Ports: []corev1.ServicePort{{
				Name: "webhook", Port: int32(s.Port), TargetPort: intstr.FromInt32(int32(s.Port)), Protocol: corev1.ProtocolTCP,
			}}},
			Webhook: map[string]aev1.WebhookEventSource{
				EventGit:    webhook(s, s.Endpoint),
				EventManual: webhook(s, s.ManualEndpoint),
			},
		},
	}
}

// DeployWorkflow is the Workflow the Sensor creates: the platform's deploy
// WorkflowTemplate, labelled with what triggered it.
func DeployWorkflow(p *spec.Platform, s Settings, n Names, trigger string) *wfv1.Workflow {
	l := labels(p, "deploy")
	l[LabelTrigger] = trigger
	return &wfv1.Workflow{
		TypeMeta: metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: n.DeployTemplate + "-",
			Namespace:    s.Namespace,
			Labels:       l,
		},
		Spec: wfv1.WorkflowSpec{WorkflowTemplateRef: &wfv1.WorkflowTemplateRef{Name: n.DeployTemplate}},
	}
}

func sensor(p *spec.Platform, s Settings, n Names) (*aev1.Sensor, error) {
	trigger := func(name, dependency string) (aev1.Trigger, error) {
		wf, err := manifest.Clean(DeployWorkflow(p, s, n, dependency))
		return aev1.Trigger{Template: &aev1.TriggerTemplate{
			Name:       name,
			Conditions: dependency,
			K8s: &aev1.StandardK8STrigger{
				Operation: aev1.Create,
				Source:    &aev1.ArtifactLocation{Resource: ptr(aev1.NewK8SResource(wf))},
			},
		}}, err
	}
	onPush, err := trigger("deploy-on-push", DependencyGit)
	if err != nil {
		return nil, err
	}
	manual, err := trigger("deploy-manual", DependencyManual)
	if err != nil {
		return nil, err
	}
	return &aev1.Sensor{
		TypeMeta:   metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "Sensor"},
		ObjectMeta: meta(p, s, n.Sensor, "deploy"),
		Spec: aev1.SensorSpec{
			EventBusName: s.EventBus,
			Template:     podTemplate(n.ServiceAccount),
			Dependencies: []aev1.EventDependency{
				{
					Name: DependencyGit, EventSourceName: n.EventSource, EventName: EventGit,
					Filters: &aev1.EventDependencyFilter{Data: []aev1.DataFilter{{
						Path: "body.ref", Type: aev1.JSONTypeString, Value: []string{BranchFilter(s.Branch)},
					}}},
				},
				{Name: DependencyManual, EventSourceName: n.EventSource, EventName: EventManual},
			},
			Triggers: []aev1.Trigger{onPush, manual},
		},
	}, nil
}

func sensorRBAC(p *spec.Platform, s Settings, n Names) []any {
	return []any{
		&corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: meta(p, s, n.ServiceAccount, ""),
		},
		&rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: meta(p, s, n.Role, ""),
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{"argoproj.io"},
				Resources: []string{"workflows"},
				Verbs:     []string{"create"},
			}},
		},
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: meta(p, s, n.Role, ""),
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: n.Role},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: n.ServiceAccount, Namespace: s.Namespace}},
		},
	}
}

func validateCron(p *spec.Platform, s Settings, n Names) *wfv1.CronWorkflow {
	wfLabels := labels(p, "validate")
	wfLabels[LabelTrigger] = "schedule"
	return &wfv1.CronWorkflow{
		TypeMeta:   metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "CronWorkflow"},
		ObjectMeta: meta(p, s, n.CronWorkflow, "validate"),
		Spec: wfv1.CronWorkflowSpec{
			Schedules:                  []string{s.ValidateSchedule},
			Timezone:                   "UTC",
			ConcurrencyPolicy:          wfv1.ForbidConcurrent,
			SuccessfulJobsHistoryLimit: ptr(int32(3)),
			FailedJobsHistoryLimit:     ptr(int32(3)),
			WorkflowMetadata:           &metav1.ObjectMeta{Labels: wfLabels},
			WorkflowSpec: wfv1.WorkflowSpec{
				WorkflowTemplateRef: &wfv1.WorkflowTemplateRef{Name: n.ValidateTemplate},
				ServiceAccountName:  p.Spec.Workflow.ServiceAccount,
				SecurityContext:     PodSecurity(),
			},
		},
	}
}

// Marshal renders a typed object as YAML in the plain form of package
// manifest (no status, no creationTimestamp, no empty noise), without the
// null fields typed objects carry (the Sensor's loggingFields).
func Marshal(obj any) ([]byte, error) {
	m, err := manifest.Clean(obj)
	if err != nil {
		return nil, err
	}
	for k, v := range m {
		if v == nil {
			delete(m, k)
		}
	}
	if sp, ok := m["spec"].(map[string]any); ok {
		for k, v := range sp {
			if v == nil {
				delete(sp, k)
			}
		}
	}
	return yaml.Marshal(m)
}

func ptr[T any](v T) *T { return &v }
