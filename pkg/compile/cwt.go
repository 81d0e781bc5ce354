package compile

import (
	"encoding/json"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/deployctl/deployctl/pkg/spec"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// cwtDescriptions are the templates' one-line descriptions (their
// workflows.argoproj.io/description annotation), by command.
var cwtDescriptions = map[string]string{
	stepcontract.CmdSyncAndWait: "Sync one Argo CD Application and wait until it is freshly Healthy.",
	stepcontract.CmdValidate:    "Read-only health of a group of Argo CD Applications and their aggregate (deployctl docs/requirements.md#rfc-55-aggregate-health).",
	stepcontract.CmdTeardown:    "Delete one Argo CD Application with cascading deletion and wait until its resources are gone.",
}

// ClusterWorkflowTemplates are the reusable templates, one per step
// command, rendered from the step contract (pkg/stepcontract) in the
// spec's step mode: a pod running deploystep, or the executor plugin's
// call of it. They are platform-independent: one set serves every
// platform that uses the same image (and step mode: plugin mode's are
// named apart). The calling workflow passes each node's arguments and
// defines the connection parameters at workflow level; the templates'
// own workflow parameters are defaults so that they validate alone.
func ClusterWorkflowTemplates(w spec.Workflow) ([]*wfv1.ClusterWorkflowTemplate, error) {
	var out []*wfv1.ClusterWorkflowTemplate
	for _, c := range stepcontract.Commands() {
		ct := stepcontract.TemplateOf(c)
		cwt := &wfv1.ClusterWorkflowTemplate{
			TypeMeta: metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "ClusterWorkflowTemplate"},
			ObjectMeta: metav1.ObjectMeta{
				Name:        CWTPrefix + ct.Command,
				Labels:      map[string]string{LabelManagedBy: ManagedBy, "app.kubernetes.io/part-of": ManagedBy},
				Annotations: map[string]string{descriptionKey: cwtDescriptions[ct.Command]},
			},
		}
		for _, p := range ct.Workflow {
			cwt.Spec.Arguments.Parameters = append(cwt.Spec.Arguments.Parameters, param(p.Name, p.Default))
		}
		t := wfv1.Template{
			Name: ct.Command,
			RetryStrategy: &wfv1.RetryStrategy{
				Limit:       intOrString(ct.RetryLimit),
				RetryPolicy: wfv1.RetryPolicyAlways,
				Backoff:     &wfv1.Backoff{Duration: ct.RetryBackoff, Factor: intOrString(ct.RetryFactor)},
			},
			Outputs: wfv1.Outputs{Parameters: []wfv1.Parameter{{Name: stepcontract.OutputResult}}},
		}
		for _, in := range ct.Inputs {
			p := wfv1.Parameter{Name: in.Name}
			if in.Default != nil {
				p.Default = wfv1.AnyStringPtr(*in.Default)
			}
			for _, e := range in.Enum {
				p.Enum = append(p.Enum, wfv1.AnyString(e))
			}
			if in.Description != "" {
				p.Description = wfv1.AnyStringPtr(in.Description)
			}
			t.Inputs.Parameters = append(t.Inputs.Parameters, p)
		}
		if w.StepMode.Plugin() {
			if err := pluginTemplate(&t, ct.Call.Plugin()); err != nil {
				return nil, err
			}
			cwt.Name += PluginCWTSuffix
			cwt.Annotations[descriptionKey] += " " + pluginCWTComment
		} else {
			podTemplate(&t, ct, w)
		}
		cwt.Spec.Templates = []wfv1.Template{t}
		out = append(out, cwt)
	}
	return out, nil
}

const descriptionKey = "workflows.argoproj.io/description"

func intOrString(s string) *intstr.IntOrString {
	v := intstr.FromString(s)
	return &v
}

// podTemplate makes t the command's pod: deploystep in a locked-down
// container with the Argo CD token and CA as read-only files, writing its
// result to a memory volume the output parameter reads; Argo bounds an
// attempt by activeDeadlineSeconds and retries only the transient exit.
func podTemplate(t *wfv1.Template, ct stepcontract.Template, w spec.Workflow) {
	t.Outputs.Parameters[0].ValueFrom = &wfv1.ValueFrom{Path: stepcontract.ResultFile, Default: wfv1.AnyStringPtr("{}")}
	if ct.Deadline != "" {
		t.ActiveDeadlineSeconds = intOrString(ct.Deadline)
	}
	// Only exit code 75 (transient: API unreachable, 5xx, operation in
	// progress) is retried; a Degraded app or a failed sync fails at once.
	t.RetryStrategy.Expression = "asInt(lastRetry.exitCode) == 75"
	t.SecurityContext = &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr(true),
		RunAsUser:      ptr(int64(stepUID)),
		RunAsGroup:     ptr(int64(stepUID)),
		FSGroup:        ptr(int64(stepUID)),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	t.Volumes = []corev1.Volume{
		{Name: volumeArgoCDTok, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  stepcontract.FromWorkflow(stepcontract.WorkflowTokenSecret),
			DefaultMode: ptr(int32(0o440)),
			Items:       []corev1.KeyToPath{{Key: stepcontract.FromWorkflow(stepcontract.WorkflowTokenKey), Path: "token"}},
		}}},
		// The CA bundle of argocd-server's certificate, when the spec
		// names one (argocd.caSecret); optional, and unused unless
		// argocd-ca-file is set.
		{Name: volumeArgoCDCA, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  stepcontract.FromWorkflow(stepcontract.WorkflowCASecret),
			Optional:    ptr(true),
			DefaultMode: ptr(int32(0o444)),
			Items:       []corev1.KeyToPath{{Key: stepcontract.FromWorkflow(stepcontract.WorkflowCAKey), Path: "ca.crt"}},
		}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
			Medium: corev1.StorageMediumMemory, SizeLimit: ptr(resource.MustParse("16Mi")),
		}}},
	}
	env := make([]corev1.EnvVar, len(ct.Call.Env))
	for i, e := range ct.Call.Env {
		env[i] = corev1.EnvVar{Name: e.Name, Value: e.Value}
	}
	t.Container = &corev1.Container{
		Name:            "main",
		Image:           w.Image,
		ImagePullPolicy: corev1.PullPolicy(w.ImagePullPolicy),
		Command:         []string{"/deploystep"},
		Args:            ct.Call.Args,
		Env:             env,
		VolumeMounts: []corev1.VolumeMount{
			{Name: volumeArgoCDTok, MountPath: tokenMount, ReadOnly: true},
			{Name: volumeArgoCDCA, MountPath: caMount, ReadOnly: true},
			{Name: "tmp", MountPath: "/tmp"},
		},
		SecurityContext: lockedDown(),
		Resources: corev1.ResourceRequirements{
			Requests: stepRequests(),
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
	}
}

// lockedDown is a step container's security context: non-root, read-only
// root filesystem, no privilege escalation, no capabilities.
func lockedDown() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr(false),
		ReadOnlyRootFilesystem:   ptr(true),
		RunAsNonRoot:             ptr(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// stepRequests are a step container's resource requests.
func stepRequests() corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")}
}

// pluginTemplate makes t the command's plugin template: the same name,
// inputs and retry limits as the pod's, the pod's command line and
// environment (without the result file) as the plugin's call, and none of
// the pod fields Argo ignores for a plugin template.
//
// Retries: Argo's operator (v3.7 and v4.0.7, executeTemplate) puts the
// Retry node around a template before it switches on its type, so plugin
// nodes retry like pods; buildRetryStrategyLocalScope sets lastRetry.status
// to the last attempt's phase for every node type, but lastRetry.exitCode
// only from outputs.exitCode, which a plugin node does not have. The plugin
// replies Error for exit 75 (the transient class), hence the expression.
func pluginTemplate(t *wfv1.Template, call stepcontract.Call) error {
	body, err := json.Marshal(map[string]stepcontract.Call{stepcontract.PluginName: call})
	if err != nil {
		return err
	}
	// Argo sets a plugin node's outputs from the plugin's reply
	// (taskset.go); the validator wants a source, and "supplied" is the
	// one that names no file or expression Argo would read.
	t.Outputs.Parameters[0].ValueFrom = &wfv1.ValueFrom{Supplied: &wfv1.SuppliedValueFrom{}}
	t.Outputs.Parameters[0].Description = wfv1.AnyStringPtr("set from the deployctl plugin's reply")
	t.RetryStrategy.Expression = `lastRetry.status == "Error"`
	t.Plugin = &wfv1.Plugin{Object: wfv1.Object{Value: body}}
	return nil
}

// templateRef points a DAG task at one of the ClusterWorkflowTemplates.
func templateRef(cwt, tmpl string) *wfv1.TemplateRef {
	return &wfv1.TemplateRef{Name: cwt, Template: tmpl, ClusterScope: true}
}

// stepTask is a DAG task calling a step command's template with the
// command's value as its arguments (stepcontract.Args: an argument equal
// to its input's default is left out, wf's value of the workflow
// parameter it defaults to included: the calling WorkflowTemplate's).
func stepTask(name string, c stepcontract.Command, deps []string, wf map[string]string) (wfv1.DAGTask, error) {
	args, err := stepcontract.Args(c, wf)
	if err != nil {
		return wfv1.DAGTask{}, errf("%s: %w", name, err)
	}
	params := make([]wfv1.Parameter, len(args))
	for i, a := range args {
		params[i] = param(a.Name, a.Value)
	}
	return wfv1.DAGTask{
		Name:        name,
		TemplateRef: templateRef(CWTPrefix+c.Command(), c.Command()),
		Depends:     depends(deps),
		Arguments:   wfv1.Arguments{Parameters: params},
	}, nil
}

// platformParams are the workflow parameters a WorkflowTemplate defines
// for the step template it calls: the platform's defaults, c's values
// (stepcontract.PlatformArgs).
func platformParams(c stepcontract.Command) ([]wfv1.Parameter, error) {
	args, err := stepcontract.PlatformArgs(c)
	if err != nil {
		return nil, err
	}
	out := make([]wfv1.Parameter, len(args))
	for i, a := range args {
		out[i] = param(a.Name, a.Value)
	}
	return out, nil
}

// paramValues are a WorkflowTemplate's workflow parameters that have a
// value, by name: what its tasks' arguments are left out against.
func paramValues(ps []wfv1.Parameter) map[string]string {
	m := make(map[string]string, len(ps))
	for _, p := range ps {
		if p.Value != nil {
			m[p.Name] = p.Value.String()
		}
	}
	return m
}
