package events

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	aev1 "github.com/argoproj/argo-events/pkg/apis/events/v1alpha1"
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/workflow/validate"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/deployctl/deployctl/pkg/spec"
)

var examples = []string{"../../examples/reference-platform.yaml", "../../examples/minimal.yaml"}

func load(t *testing.T, path string) *spec.Platform {
	t.Helper()
	p, err := spec.LoadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

// generated holds every object of the events folder, decoded strictly into
// the Argo Events, Argo Workflows and Kubernetes Go types.
type generated struct {
	files        map[string][]byte
	eventBus     *aev1.EventBus
	eventSource  *aev1.EventSource
	sensor       *aev1.Sensor
	sensorWfs    map[string]*wfv1.Workflow // by trigger name
	sa           *corev1.ServiceAccount
	role         *rbacv1.Role
	binding      *rbacv1.RoleBinding
	cronWorkflow *wfv1.CronWorkflow
	kust         struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
	}
}

// strict decodes YAML into a typed object; unknown fields are errors. It then
// renders the object again and requires the same text, so no field was lost.
func strict(t *testing.T, file, doc string, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
		t.Fatalf("%s: strict decoding into %T: %v", file, into, err)
	}
	again, err := Marshal(into)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != doc {
		t.Fatalf("%s: %T does not round-trip:\n%s\n--- vs ---\n%s", file, into, doc, again)
	}
}

func strictJSON(t *testing.T, what string, raw []byte, into any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		t.Fatalf("%s: strict decoding into %T: %v", what, into, err)
	}
}

func docs(t *testing.T, files map[string][]byte, name string) []string {
	t.Helper()
	b, ok := files[name]
	if !ok {
		t.Fatalf("%s not generated", name)
	}
	var out []string
	for _, d := range strings.Split(string(b), "---\n") {
		var lines []string
		for _, l := range strings.Split(d, "\n") {
			if !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		out = append(out, strings.Join(lines, "\n"))
	}
	return out
}

func decodeAll(t *testing.T, p *spec.Platform) *generated {
	t.Helper()
	files, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	g := &generated{files: files, sensorWfs: map[string]*wfv1.Workflow{}}
	want := []string{FileEventBus, FileEventSource, FileKustomization, FileSensorRBAC, FileSensor, FileCronWorkflow}
	var got []string
	for name := range files {
		got = append(got, name)
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("files = %v, want %v", got, want)
	}

	one := func(name string, into any) {
		d := docs(t, files, name)
		if len(d) != 1 {
			t.Fatalf("%s: %d documents, want 1", name, len(d))
		}
		strict(t, name, d[0], into)
	}
	g.eventBus, g.eventSource, g.sensor, g.cronWorkflow = &aev1.EventBus{}, &aev1.EventSource{}, &aev1.Sensor{}, &wfv1.CronWorkflow{}
	one(FileEventBus, g.eventBus)
	one(FileEventSource, g.eventSource)
	one(FileSensor, g.sensor)
	one(FileCronWorkflow, g.cronWorkflow)

	rbac := docs(t, files, FileSensorRBAC)
	if len(rbac) != 3 {
		t.Fatalf("%s: %d documents, want 3", FileSensorRBAC, len(rbac))
	}
	g.sa, g.role, g.binding = &corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}
	strict(t, FileSensorRBAC, rbac[0], g.sa)
	strict(t, FileSensorRBAC, rbac[1], g.role)
	strict(t, FileSensorRBAC, rbac[2], g.binding)

	for _, tr := range g.sensor.Spec.Triggers {
		if tr.Template == nil || tr.Template.K8s == nil || tr.Template.K8s.Source == nil || tr.Template.K8s.Source.Resource == nil {
			t.Fatalf("trigger %+v has no k8s resource", tr)
		}
		wf := &wfv1.Workflow{}
		strictJSON(t, "trigger "+tr.Template.Name, tr.Template.K8s.Source.Resource.Value, wf)
		g.sensorWfs[tr.Template.Name] = wf
	}

	strictJSON(t, FileKustomization, mustJSON(t, docs(t, files, FileKustomization)[0]), &g.kust)
	return g
}

func mustJSON(t *testing.T, doc string) []byte {
	t.Helper()
	b, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// templateStub stands in for the compiler's WorkflowTemplates in Argo's
// validator: a one-step template of the given name.
type templateStub struct {
	namespace string
	asked     []string
}

func (s *templateStub) Get(name string) (*wfv1.WorkflowTemplate, error) {
	s.asked = append(s.asked, name)
	return &wfv1.WorkflowTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace},
		Spec: wfv1.WorkflowSpec{
			Entrypoint: "main",
			Templates: []wfv1.Template{{
				Name:      "main",
				Container: &corev1.Container{Image: "registry.example.com/deployctl/deploystep:v0.1.0", Args: []string{"validate"}},
			}},
		},
	}, nil
}

type noClusterTemplates struct{}

func (noClusterTemplates) Get(name string) (*wfv1.ClusterWorkflowTemplate, error) {
	return nil, fmt.Errorf("no ClusterWorkflowTemplate %q expected", name)
}

func TestExamplesDecodeStrictlyAndValidate(t *testing.T) {
	for _, path := range examples {
		t.Run(path, func(t *testing.T) {
			p := load(t, path)
			g := decodeAll(t, p)
			s, err := Resolve(p)
			if err != nil {
				t.Fatal(err)
			}
			n := ObjectNames(p.Metadata.Name)

			// Argo's own validator accepts the CronWorkflow, resolving its
			// workflowTemplateRef to <platform>-validate.
			stub := &templateStub{namespace: s.Namespace}
			if err := validate.ValidateCronWorkflow(context.Background(), stub, noClusterTemplates{}, g.cronWorkflow, nil); err != nil {
				t.Fatalf("ValidateCronWorkflow: %v", err)
			}
			if len(stub.asked) == 0 || stub.asked[0] != p.Metadata.Name+"-validate" {
				t.Fatalf("validator resolved %v, want %s-validate", stub.asked, p.Metadata.Name)
			}
			cw := g.cronWorkflow
			if cw.Name != p.Metadata.Name+"-validate" || cw.Namespace != p.Spec.Workflow.Namespace {
				t.Fatalf("CronWorkflow %s/%s", cw.Namespace, cw.Name)
			}
			if cw.Spec.ConcurrencyPolicy != wfv1.ForbidConcurrent {
				t.Fatalf("concurrencyPolicy = %q", cw.Spec.ConcurrencyPolicy)
			}
			if !reflect.DeepEqual(cw.Spec.Schedules, []string{s.ValidateSchedule}) || cw.Spec.Schedule != "" {
				t.Fatalf("schedules = %v / %q", cw.Spec.Schedules, cw.Spec.Schedule)
			}

			// The Workflows the Sensor creates pass Argo's validator too and
			// run the platform's deploy WorkflowTemplate.
			if len(g.sensorWfs) != 2 {
				t.Fatalf("sensor triggers = %d, want 2", len(g.sensorWfs))
			}
			for name, wf := range g.sensorWfs {
				stub := &templateStub{namespace: s.Namespace}
				if err := validate.ValidateWorkflow(stub, noClusterTemplates{}, wf, nil, validate.ValidateOpts{Submit: true}); err != nil {
					t.Fatalf("trigger %s: ValidateWorkflow: %v", name, err)
				}
				if wf.Spec.WorkflowTemplateRef == nil || wf.Spec.WorkflowTemplateRef.Name != p.Metadata.Name+"-deploy" {
					t.Fatalf("trigger %s runs %+v", name, wf.Spec.WorkflowTemplateRef)
				}
				if wf.Namespace != p.Spec.Workflow.Namespace || wf.GenerateName != p.Metadata.Name+"-deploy-" || wf.Name != "" {
					t.Fatalf("trigger %s creates %s/%s%s", name, wf.Namespace, wf.GenerateName, wf.Name)
				}
			}

			// Wiring: one EventBus, every dependency names an event of the
			// EventSource, every trigger's condition a dependency.
			if g.eventBus.Name != s.EventBus || g.eventSource.Spec.EventBusName != s.EventBus || g.sensor.Spec.EventBusName != s.EventBus {
				t.Fatalf("event bus names: %s, %s, %s", g.eventBus.Name, g.eventSource.Spec.EventBusName, g.sensor.Spec.EventBusName)
			}
			if g.eventBus.Spec.JetStream == nil || g.eventBus.Spec.JetStream.Version == "" {
				t.Fatal("EventBus is not a versioned JetStream bus")
			}
			deps := map[string]bool{}
			for _, d := range g.sensor.Spec.Dependencies {
				if d.EventSourceName != n.EventSource || d.EventSourceName != g.eventSource.Name {
					t.Fatalf("dependency %s listens to %s", d.Name, d.EventSourceName)
				}
				if _, ok := g.eventSource.Spec.Webhook[d.EventName]; !ok {
					t.Fatalf("dependency %s: the EventSource has no event %s", d.Name, d.EventName)
				}
				deps[d.Name] = true
			}
			for _, tr := range g.sensor.Spec.Triggers {
				if !deps[tr.Template.Conditions] || tr.Template.K8s.Operation != aev1.Create {
					t.Fatalf("trigger %s: conditions %q, operation %q", tr.Template.Name, tr.Template.Conditions, tr.Template.K8s.Operation)
				}
			}
			git, manual := g.eventSource.Spec.Webhook[EventGit], g.eventSource.Spec.Webhook[EventManual]
			if git.Endpoint != s.Endpoint || manual.Endpoint != s.ManualEndpoint || git.Endpoint == manual.Endpoint {
				t.Fatalf("endpoints %q, %q", git.Endpoint, manual.Endpoint)
			}
			if git.Port != fmt.Sprint(s.Port) || manual.Port != git.Port || git.Method != "POST" {
				t.Fatalf("webhook port/method %s %s %s", git.Port, manual.Port, git.Method)
			}
			// Both endpoints answer only the bearer token of the auth Secret.
			for ev, wh := range map[string]aev1.WebhookEventSource{EventGit: git, EventManual: manual} {
				a := wh.AuthSecret
				if a == nil || a.Name != s.AuthSecret.Name || a.Key != s.AuthSecret.Key || s.AuthSecret != p.Spec.Events.WebhookAuthSecret() {
					t.Fatalf("endpoint %s: authSecret %+v, want %+v", ev, a, s.AuthSecret)
				}
			}
			if sp := g.eventSource.Spec.Service; sp == nil || len(sp.Ports) != 1 || int(sp.Ports[0].Port) != s.Port {
				t.Fatalf("EventSource service %+v", sp)
			}

			// Least privilege: the Sensor's account may only create Workflows.
			if g.sensor.Spec.Template.ServiceAccountName != g.sa.Name {
				t.Fatalf("sensor runs as %q, RBAC is for %q", g.sensor.Spec.Template.ServiceAccountName, g.sa.Name)
			}
			wantRules := []rbacv1.PolicyRule{{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"create"}}}
			if !reflect.DeepEqual(g.role.Rules, wantRules) {
				t.Fatalf("role rules = %+v", g.role.Rules)
			}
			if g.binding.RoleRef.Name != g.role.Name || len(g.binding.Subjects) != 1 ||
				g.binding.Subjects[0].Name != g.sa.Name || g.binding.Subjects[0].Namespace != g.sa.Namespace {
				t.Fatalf("binding %+v", g.binding)
			}
			for _, o := range []metav1.Object{g.eventBus, g.eventSource, g.sensor, g.sa, g.role, g.binding, g.cronWorkflow} {
				if o.GetNamespace() != p.Spec.Workflow.Namespace {
					t.Fatalf("%s is in namespace %q", o.GetName(), o.GetNamespace())
				}
			}

			// The kustomization lists every other file.
			var others []string
			for name := range g.files {
				if name != FileKustomization {
					others = append(others, name)
				}
			}
			sort.Strings(others)
			if !reflect.DeepEqual(g.kust.Resources, others) || g.kust.Kind != "Kustomization" {
				t.Fatalf("kustomization = %+v", g.kust)
			}
		})
	}
}

func checkPod(t *testing.T, what string, pod *corev1.PodSecurityContext) {
	t.Helper()
	if pod == nil || pod.RunAsNonRoot == nil || !*pod.RunAsNonRoot || pod.RunAsUser == nil || *pod.RunAsUser == 0 ||
		pod.SeccompProfile == nil || pod.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Fatalf("%s: pod security context %+v", what, pod)
	}
}

func checkContainer(t *testing.T, what string, c *corev1.SecurityContext) {
	t.Helper()
	if c == nil || c.ReadOnlyRootFilesystem == nil || !*c.ReadOnlyRootFilesystem ||
		c.AllowPrivilegeEscalation == nil || *c.AllowPrivilegeEscalation ||
		c.Capabilities == nil || !reflect.DeepEqual(c.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
		c.SeccompProfile == nil || c.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Fatalf("%s: container security context %+v", what, c)
	}
}

func TestEveryPodIsHardened(t *testing.T) {
	g := decodeAll(t, load(t, examples[0]))
	for what, tpl := range map[string]*aev1.Template{"EventSource": g.eventSource.Spec.Template, "Sensor": g.sensor.Spec.Template} {
		if tpl == nil || tpl.Container == nil {
			t.Fatalf("%s has no pod template", what)
		}
		checkPod(t, what, tpl.SecurityContext)
		checkContainer(t, what, tpl.Container.SecurityContext)
		// Argo Events adds its own emptyDir "tmp" at /tmp to these pods: a
		// second one makes its Deployment invalid (seen on a real cluster).
		for _, v := range tpl.Volumes {
			if v.Name == "tmp" {
				t.Errorf("%s: volume %q duplicates the one Argo Events adds", what, v.Name)
			}
		}
		for _, m := range tpl.Container.VolumeMounts {
			if m.Name == "tmp" || m.MountPath == "/tmp" {
				t.Errorf("%s: mount %s at %s duplicates the one Argo Events adds", what, m.Name, m.MountPath)
			}
		}
	}
	js := g.eventBus.Spec.JetStream
	checkPod(t, "EventBus", js.SecurityContext)
	for what, ct := range map[string]*aev1.ContainerTemplate{"nats": js.ContainerTemplate, "reloader": js.ReloaderContainerTemplate, "metrics": js.MetricsContainerTemplate} {
		if ct == nil {
			t.Fatalf("EventBus %s container has no template", what)
		}
		checkContainer(t, "EventBus "+what, ct.SecurityContext)
	}
	checkPod(t, "CronWorkflow", g.cronWorkflow.Spec.WorkflowSpec.SecurityContext)
}

func TestBranchFilter(t *testing.T) {
	p := load(t, examples[0])
	g := decodeAll(t, p)
	var filter *aev1.DataFilter
	for _, d := range g.sensor.Spec.Dependencies {
		if d.Name == DependencyGit {
			if d.Filters == nil || len(d.Filters.Data) != 1 {
				t.Fatalf("git dependency filters %+v", d.Filters)
			}
			filter = &d.Filters.Data[0]
		} else if d.Filters != nil {
			t.Fatalf("manual dependency is filtered: %+v", d.Filters)
		}
	}
	if filter == nil || filter.Path != "body.ref" || filter.Type != aev1.JSONTypeString || len(filter.Value) != 1 {
		t.Fatalf("filter %+v", filter)
	}
	// Argo Events matches string filters as regular expressions.
	re := regexp.MustCompile(filter.Value[0])
	for ref, want := range map[string]bool{
		"refs/heads/main":         true,
		"refs/heads/main-feature": false,
		"refs/heads/x/main":       false,
		"refs/tags/main":          false,
	} {
		if re.MatchString(ref) != want {
			t.Errorf("%s matched = %v, want %v", ref, !want, want)
		}
	}
	if got := BranchFilter("release/1.0"); !regexp.MustCompile(got).MatchString("refs/heads/release/1.0") ||
		regexp.MustCompile(got).MatchString("refs/heads/release/1x0") {
		t.Fatalf("BranchFilter does not quote: %s", got)
	}
}

func TestDefaults(t *testing.T) {
	p := load(t, examples[1]) // minimal: no events section
	if p.Spec.Events != nil {
		t.Fatal("minimal example grew an events section; pick another platform for this test")
	}
	s, err := Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{
		Namespace: "argo", EventBus: "default", Port: 12000, Endpoint: "/push", ManualEndpoint: "/push/manual",
		Branch: "main", ValidateSchedule: "*/15 * * * *",
		AuthSecret: spec.SecretKeyRef{Name: "deployctl-webhook-token", Key: "token"},
	}
	if s != want {
		t.Fatalf("settings = %+v, want %+v", s, want)
	}

	p = load(t, examples[0])
	p.Spec.Events = &spec.Events{Webhook: &spec.Webhook{Endpoint: "hooks/git/", Port: 8080, Branch: "prod", AuthSecret: &spec.SecretKeyRef{Name: "hook"}}, ValidateSchedule: "0 * * * *", EventBus: "bus"}
	s, err = Resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	if s.Endpoint != "/hooks/git" || s.ManualEndpoint != "/hooks/git/manual" || s.Port != 8080 || s.Branch != "prod" ||
		s.ValidateSchedule != "0 * * * *" || s.EventBus != "bus" || s.AuthSecret != (spec.SecretKeyRef{Name: "hook", Key: "token"}) {
		t.Fatalf("settings = %+v", s)
	}
}

func TestInvalidSettings(t *testing.T) {
	cases := map[string]struct {
		ev   spec.Events
		name string
		want string
	}{
		"schedule": {ev: spec.Events{ValidateSchedule: "every minute"}, want: "spec.events.validateSchedule"},
		"port":     {ev: spec.Events{Webhook: &spec.Webhook{Port: 70000}}, want: "spec.events.webhook.port"},
		"endpoint": {ev: spec.Events{Webhook: &spec.Webhook{Endpoint: "/a b"}}, want: "spec.events.webhook.endpoint"},
		"manual":   {ev: spec.Events{Webhook: &spec.Webhook{Endpoint: "/x/manual"}}, want: "must not end in /manual"},
		"name":     {name: strings.Repeat("p", 44), want: "longer than 52"},
		"secret":   {ev: spec.Events{Webhook: &spec.Webhook{AuthSecret: &spec.SecretKeyRef{Name: strings.Repeat("s", 57)}}}, want: "spec.events.webhook.authSecret.name"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := load(t, examples[0])
			ev := tc.ev
			p.Spec.Events = &ev
			if tc.name != "" {
				p.Metadata.Name = tc.name
			}
			_, err := Generate(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	p := load(t, examples[0])
	a, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		b, err := Generate(load(t, examples[0]))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatal("two runs differ")
		}
	}
}
