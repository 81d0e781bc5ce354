package livestate

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/deployctl/deployctl/pkg/step/argocd/appstatus"
)

// GVRApplication is Argo CD's Application resource.
var GVRApplication = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}

// AppStatus is what Argo CD's controller wrote on an Application. Its JSON
// is the `argocd` of a node in `deployctl status --output json`.
type AppStatus struct {
	Exists           bool             `json:"exists"`
	Sync             appstatus.Sync   `json:"sync,omitempty"`
	Revision         string           `json:"-"`
	Health           appstatus.Health `json:"health,omitempty"`
	HealthMessage    string           `json:"healthMessage,omitempty"`
	OperationPhase   string           `json:"operationPhase,omitempty"`
	OperationMessage string           `json:"operationMessage,omitempty"`
	// OperationRequested: the Application carries an operation the
	// controller has not started yet.
	OperationRequested bool `json:"-"`
	// Problems are the unhealthy resources ("Kind namespace/name Health:
	// message") and the error conditions ("TypeError: message").
	Problems   []string `json:"problems,omitempty"`
	HistoryLen int      `json:"-"` // sync operations recorded
}

// ReadApp reads an Application's status; nil (absent) reads as not Exists.
func ReadApp(u *unstructured.Unstructured) AppStatus {
	if u == nil {
		return AppStatus{}
	}
	str := func(m map[string]any, path ...string) string {
		v, _, _ := unstructured.NestedString(m, path...)
		return v
	}
	o := u.Object
	s := AppStatus{Exists: true,
		Sync: appstatus.Sync(str(o, "status", "sync", "status")), Revision: str(o, "status", "sync", "revision"),
		Health: appstatus.Health(str(o, "status", "health", "status")), HealthMessage: str(o, "status", "health", "message"),
		OperationPhase: str(o, "status", "operationState", "phase"), OperationMessage: str(o, "status", "operationState", "message")}
	_, s.OperationRequested = o["operation"]
	if h, ok, _ := unstructured.NestedSlice(o, "status", "history"); ok {
		s.HistoryLen = len(h)
	}
	res, _, _ := unstructured.NestedSlice(o, "status", "resources")
	for _, x := range res {
		m, _ := x.(map[string]any)
		h := str(m, "health", "status")
		if h == "" || h == string(appstatus.Healthy) {
			continue
		}
		p := str(m, "kind") + " " + str(m, "namespace") + "/" + str(m, "name") + " " + h
		if msg := str(m, "health", "message"); msg != "" {
			p += ": " + msg
		}
		s.Problems = append(s.Problems, p)
	}
	conds, _, _ := unstructured.NestedSlice(o, "status", "conditions")
	for _, x := range conds {
		m, _ := x.(map[string]any)
		if t := str(m, "type"); strings.HasSuffix(t, "Error") {
			s.Problems = append(s.Problems, t+": "+str(m, "message"))
		}
	}
	return s
}
