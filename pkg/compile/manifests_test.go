package compile

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/deployctl/deployctl/pkg/dag"
)

// Every deploy task (the handoff too) reads its Application from a
// ConfigMap of the compile, by Argo's valueFrom.configMapKeyRef under its
// own name; the entry is the base64 JSON of exactly that Application; the
// ConfigMaps carry the label Argo reads parameters by, in the workflow
// namespace, and hold no entry no task reads.
func TestDeployManifestsInConfigMaps(t *testing.T) {
	out := shop(t)
	if len(out.ApplicationConfigMaps) != 1 {
		t.Fatalf("%d ConfigMaps, want 1", len(out.ApplicationConfigMaps))
	}
	cm := out.ApplicationConfigMaps[0]
	if cm.Name != "shop-deploy-applications-1" || cm.Namespace != out.WorkflowTemplates[dag.Deploy].Namespace ||
		cm.Labels[LabelArgoConfigMapType] != ArgoConfigMapParameter || cm.Labels[LabelPlatform] != "shop" {
		t.Errorf("ConfigMap %s/%s labels %v", cm.Namespace, cm.Name, cm.Labels)
	}
	apps := map[string]*Application{out.Root.Name: out.Root}
	for _, a := range out.Applications {
		apps[a.Name] = a
	}
	read := map[string]bool{}
	for _, task := range out.WorkflowTemplates[dag.Deploy].Spec.Templates[0].DAG.Tasks {
		if task.TemplateRef == nil {
			continue
		}
		p := task.Arguments.GetParameterByName(manifestInput)
		if p == nil || p.Value != nil || p.ValueFrom == nil || p.ValueFrom.ConfigMapKeyRef == nil {
			t.Fatalf("task %s: %s is not read from a ConfigMap: %+v", task.Name, manifestInput, p)
		}
		ref := p.ValueFrom.ConfigMapKeyRef
		if ref.Name != cm.Name || ref.Key != task.Name {
			t.Errorf("task %s reads %s/%s", task.Name, ref.Name, ref.Key)
		}
		read[ref.Key] = true
		raw, err := base64.StdEncoding.DecodeString(cm.Data[ref.Key])
		if err != nil {
			t.Fatalf("%s: %v", task.Name, err)
		}
		var got Application
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		app := args(task)["app"]
		want, _ := json.Marshal(apps[app])
		again, _ := json.Marshal(&got)
		if apps[app] == nil || string(want) != string(again) {
			t.Errorf("task %s: the entry is not Application %s:\n%s\nwant\n%s", task.Name, app, again, want)
		}
	}
	if len(read) != len(cm.Data) || !read[HandoffTask] {
		t.Errorf("entries %d, read by tasks %d (handoff: %v)", len(cm.Data), len(read), read[HandoffTask])
	}
}

// Past ManifestBudget the Applications go on in a next ConfigMap, in task
// order, each under the budget; the same spec splits the same way.
func TestDeployManifestsSplit(t *testing.T) {
	old := ManifestBudget
	ManifestBudget = 2500
	defer func() { ManifestBudget = old }()
	out, again := shop(t), shop(t)
	if len(out.ApplicationConfigMaps) < 2 {
		t.Fatalf("%d ConfigMaps under a budget of %d bytes, want several", len(out.ApplicationConfigMaps), ManifestBudget)
	}
	if !reflect.DeepEqual(out.ApplicationConfigMaps, again.ApplicationConfigMaps) {
		t.Error("two compiles of one spec split differently")
	}
	where := map[string]string{}
	for i, cm := range out.ApplicationConfigMaps {
		if want := ApplicationsConfigMapName("shop", i+1); cm.Name != want {
			t.Errorf("ConfigMap %d is %s, want %s", i, cm.Name, want)
		}
		size := 0
		for k, v := range cm.Data {
			size += len(k) + len(v)
			where[k] = cm.Name
		}
		if size > ManifestBudget && len(cm.Data) > 1 {
			t.Errorf("%s holds %d bytes in %d entries, over the budget", cm.Name, size, len(cm.Data))
		}
	}
	last := 0
	for _, task := range out.WorkflowTemplates[dag.Deploy].Spec.Templates[0].DAG.Tasks {
		p := task.Arguments.GetParameterByName(manifestInput)
		if p == nil {
			continue
		}
		ref := p.ValueFrom.ConfigMapKeyRef
		if where[task.Name] != ref.Name {
			t.Errorf("task %s reads %s, its entry is in %s", task.Name, ref.Name, where[task.Name])
		}
		k := 0
		for i, cm := range out.ApplicationConfigMaps {
			if cm.Name == ref.Name {
				k = i
			}
		}
		if k < last {
			t.Errorf("task %s reads ConfigMap %d after a task read %d: not in task order", task.Name, k, last)
		}
		last = k
	}
}
