package compile

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/pkg/spec"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// Plugin mode (spec.workflow.stepMode: plugin, issue 15): the steps run in
// `deploystep serve`, an Argo Workflows executor plugin, as a sidecar of the
// one agent pod Argo starts per workflow. Names fixed by the plugin-mode
// contract; the plugin server (pkg/step) reads exactly what is made here.
const (
	// PluginName is the key of a plugin template (`plugin: {deployctl: …}`)
	// and Argo's name of the plugin: its ConfigMap's name minus
	// "-executor-plugin".
	PluginName = stepcontract.PluginName
	// PluginConfigMap declares the plugin to the controller, in the
	// workflow namespace, labelled PluginConfigMapLabel=PluginKind.
	PluginConfigMap      = PluginName + "-executor-plugin"
	PluginConfigMapLabel = "workflows.argoproj.io/configmap-type"
	PluginKind           = "ExecutorPlugin"
	// PluginContainer is the sidecar's name in the agent pod.
	PluginContainer = "deployctl-plugin"
	// PluginPort is where the sidecar listens, on the pod's loopback only:
	// the agent calls http://localhost:PORT.
	PluginPort = 4355
	// PluginServiceAccount is the sidecar's own identity (Argo mounts the
	// token of "<plugin>-executor-plugin", PluginConfigMap's name): it may
	// only read workflows.
	PluginServiceAccount = spec.PluginServiceAccount
	// PluginCWTSuffix names the plugin-mode ClusterWorkflowTemplates, so
	// a cluster can hold platforms of both modes: deployctl-sync-and-wait
	// (pod) and deployctl-sync-and-wait-plugin.
	PluginCWTSuffix = "-plugin"
)

// TokenSecretName is the legacy token Secret Argo reads for a service
// account that lists no secrets (Kubernetes ≥ 1.24 makes none itself).
func TokenSecretName(serviceAccount string) string {
	return serviceAccount + ".service-account-token"
}

// The credential mounts of the sidecar: the same paths as the pods'.
const (
	tokenMount       = "/var/run/secrets/argocd"
	stepUID          = 65532
	volumeArgoCDTok  = "argocd-token"
	volumeArgoCDCA   = "argocd-ca"
	pluginCWTComment = "Plugin mode: runs in the deployctl executor plugin (deploystep serve) in the workflow's agent pod, not in a pod of its own. " +
		"Argo applies this retryStrategy to plugin nodes as to pods (operator.go executeTemplate wraps every template type in a Retry node; lastRetry.status is the attempt's phase, Error for the step's transient exit 75, Failed otherwise). " +
		"Argo ignores activeDeadlineSeconds, containers and volumes on plugin templates: the plugin bounds each node by its own sync and health timeouts."
)

// PluginSidecar is the plugin's container in the agent pod: the step image
// serving the plugin API on loopback, as locked down as a step pod's
// container, with the Argo CD credentials as read-only files.
func PluginSidecar(w spec.Workflow) corev1.Container {
	sc := lockedDown()
	sc.RunAsUser, sc.RunAsGroup = ptr(int64(stepUID)), ptr(int64(stepUID))
	return corev1.Container{
		Name:            PluginContainer,
		Image:           w.Image,
		ImagePullPolicy: corev1.PullPolicy(w.ImagePullPolicy),
		Command:         []string{"/deploystep", "serve", fmt.Sprintf("--listen=127.0.0.1:%d", PluginPort)},
		Ports:           []corev1.ContainerPort{{Name: "plugin", ContainerPort: PluginPort}},
		VolumeMounts: []corev1.VolumeMount{
			{Name: volumeArgoCDTok, MountPath: tokenMount, ReadOnly: true},
			{Name: volumeArgoCDCA, MountPath: caMount, ReadOnly: true},
		},
		SecurityContext: sc,
		Resources: corev1.ResourceRequirements{
			Requests: stepRequests(),
			// 1,000 jobs (the server's cap) at the measured upper bound
			// of ~255 KiB each, with headroom (docs/step-contract.md).
			Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("320Mi")},
		},
	}
}

// pluginConfigMap declares the plugin to Argo (workflow/util/plugins
// FromConfigMap reads exactly these keys).
func pluginConfigMap(p *spec.Platform, labels map[string]string) (*corev1.ConfigMap, error) {
	c := PluginSidecar(p.Spec.Workflow)
	text, err := yaml.Marshal(c)
	if err != nil {
		return nil, err
	}
	l := map[string]string{PluginConfigMapLabel: PluginKind}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: PluginConfigMap, Namespace: p.Spec.Workflow.Namespace, Labels: l},
		Data: map[string]string{
			"sidecar.automountServiceAccountToken": "true",
			"sidecar.container":                    string(text),
		},
	}, nil
}

// pluginRBAC is what plugin mode adds to rbac/: the plugin's declaration,
// its service account that may only get workflows in the workflow
// namespace (the plugin reads its own workflow's node status to recover a
// node after a restart), and the legacy token Secrets Argo mounts into the
// agent pod for the workflow's service account and the plugin's.
func pluginRBAC(p *spec.Platform, meta func(name, namespace string) metav1.ObjectMeta) ([]any, error) {
	ns := p.Spec.Workflow.Namespace
	cm, err := pluginConfigMap(p, meta("", "").Labels)
	if err != nil {
		return nil, err
	}
	token := func(sa string) *corev1.Secret {
		m := meta(TokenSecretName(sa), ns)
		m.Annotations = map[string]string{corev1.ServiceAccountNameKey: sa}
		return &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: m,
			Type:       corev1.SecretTypeServiceAccountToken,
		}
	}
	return []any{
		cm,
		&corev1.ServiceAccount{
			TypeMeta:                     metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta:                   meta(PluginServiceAccount, ns),
			AutomountServiceAccountToken: ptr(true),
		},
		&rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: meta(PluginServiceAccount, ns),
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"get"}}},
		},
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: meta(PluginServiceAccount, ns),
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: PluginServiceAccount},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: PluginServiceAccount, Namespace: ns}},
		},
		token(p.Spec.Workflow.ServiceAccount),
		token(PluginServiceAccount),
	}, nil
}

// agentRules are what the agent (Argo's argoexec in the agent pod, as the
// workflow's service account) needs besides the pods' rule: watch the
// workflow's WorkflowTaskSet and patch the results into its status (Argo's
// quick-start agent-role, nothing more).
var agentRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflowtasksets"}, Verbs: []string{"list", "watch"}},
	{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflowtasksets/status"}, Verbs: []string{"patch"}},
}

// agentGraceSeconds is the agent pod's termination grace period.
const agentGraceSeconds = 10

// podSpecPatch gives the agent pod the Argo CD credential volumes the
// sidecar mounts (the ConfigMap can name mounts, not volumes), defined as
// the step pods define them, with the secret names of the spec. Argo
// applies a workflow's podSpecPatch to its agent pod (agent.go), and in
// plugin mode that is the workflow's only pod. fsGroup: the agent pod's
// own security context has none, and the sidecar (group 65532) must read
// two 0440 files: the Argo CD token, and the agent's bearer token that
// Argo's init container (user 8737) writes to /var/run/argo (argoexec
// agent init: directory 0770, file 0440; fsGroup makes their group ours).
// terminationGracePeriodSeconds: a deleted agent pod's agent goes on
// calling the plugin until it is killed (seen on Argo Workflows v3.7.18),
// so the plugin answers until then (docs/step-contract.md); 10 s instead
// of Kubernetes' 30 bounds how long the next agent pod, same name, waits.
func podSpecPatch(p *spec.Platform) (string, error) {
	cs := caSecretOf(p.Spec.ArgoCD)
	patch := corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr(int64(agentGraceSeconds)),
		SecurityContext:               &corev1.PodSecurityContext{FSGroup: ptr(int64(stepUID))},
		Volumes: []corev1.Volume{
			{Name: volumeArgoCDTok, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName:  p.Spec.ArgoCD.TokenSecret.Name,
				DefaultMode: ptr(int32(0o440)),
				Items:       []corev1.KeyToPath{{Key: p.Spec.ArgoCD.TokenSecret.Key, Path: "token"}},
			}}},
			{Name: volumeArgoCDCA, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName:  cs.secret,
				Optional:    ptr(true),
				DefaultMode: ptr(int32(0o444)),
				Items:       []corev1.KeyToPath{{Key: cs.key, Path: "ca.crt"}},
			}}},
		},
	}
	// PodSpec's containers field has no omitempty: keep only what is set.
	raw, err := json.Marshal(patch)
	if err != nil {
		return "", err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	delete(m, "containers")
	out, err := json.Marshal(m)
	return string(out), err
}
