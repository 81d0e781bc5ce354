// Package plugintest drives the executor plugin in tests as Argo's agent
// and the Kubernetes API would: a fake API server holding one Workflow
// whose nodes the test edits, and calls of the plugin's one method.
package plugintest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// APIToken is the plugin's ServiceAccount token the fake API accepts.
const APIToken = "sa-token"

// Node is a workflow status node as Argo writes it (the fields the plugin
// reads).
type Node struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Type         string            `json:"type"`
	TemplateName string            `json:"templateName,omitempty"`
	TemplateRef  map[string]string `json:"templateRef,omitempty"`
	Phase        string            `json:"phase,omitempty"`
	StartedAt    string            `json:"startedAt,omitempty"`
	Children     []string          `json:"children,omitempty"`
	Inputs       *Inputs           `json:"inputs,omitempty"`
}

// Inputs are a node's or template's inputs.
type Inputs struct {
	Parameters []Param `json:"parameters"`
}

// Param is one input parameter.
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Kube is a fake Kubernetes API serving GET of one Workflow.
type Kube struct {
	URL       string
	TokenFile string // holds APIToken, for the plugin's KubeTokenFile

	Namespace, Name, UID string

	mu     sync.Mutex
	nodes  map[string]*Node
	status int // != 0: every GET answers this status
	gets   int
}

// NewKube starts the fake API with an empty Workflow ns/name of uid.
func NewKube(t testing.TB, ns, name, uid string) *Kube {
	k := &Kube{Namespace: ns, Name: name, UID: uid, nodes: map[string]*Node{}}
	srv := httptest.NewServer(http.HandlerFunc(k.serve))
	t.Cleanup(srv.Close)
	k.URL = srv.URL
	k.TokenFile = filepath.Join(t.TempDir(), "sa-token")
	if err := os.WriteFile(k.TokenFile, []byte(APIToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return k
}

// SetNode adds or replaces a node.
func (k *Kube) SetNode(n Node) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.nodes[n.ID] = &n
}

// SetPhase changes a node's phase.
func (k *Kube) SetPhase(id, phase string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.nodes[id].Phase = phase
}

// FailWith makes every GET answer status (0: normal again).
func (k *Kube) FailWith(status int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.status = status
}

// Gets is how many times the Workflow was read.
func (k *Kube) Gets() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.gets
}

func (k *Kube) serve(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	defer k.mu.Unlock()
	want := fmt.Sprintf("/apis/argoproj.io/v1alpha1/namespaces/%s/workflows/%s", k.Namespace, k.Name)
	if r.Header.Get("Authorization") != "Bearer "+APIToken {
		http.Error(w, `{"kind":"Status","code":401}`, http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodGet || r.URL.Path != want {
		http.Error(w, `{"kind":"Status","code":404}`, http.StatusNotFound)
		return
	}
	k.gets++
	if k.status != 0 {
		http.Error(w, fmt.Sprintf(`{"kind":"Status","code":%d}`, k.status), k.status)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
		"metadata": map[string]any{"name": k.Name, "namespace": k.Namespace, "uid": k.UID},
		"status":   map[string]any{"phase": "Running", "nodes": k.nodes},
	})
}

// Template is a plugin template as the compiler emits it.
func Template(name string, inputs []Param, args []string, env map[string]string) map[string]any {
	var ev []map[string]string
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ev = append(ev, map[string]string{"name": k, "value": env[k]})
	}
	return map[string]any{
		"name":    name,
		"inputs":  Inputs{Parameters: inputs},
		"plugin":  map[string]any{"deployctl": map[string]any{"args": args, "env": ev}},
		"outputs": map[string]any{"parameters": []map[string]any{{"name": "result", "valueFrom": map[string]any{"supplied": map[string]any{}}}}},
	}
}

// Body is the agent's request for template in the Kube's workflow.
func (k *Kube) Body(template any) []byte {
	b, _ := json.Marshal(map[string]any{
		"workflow": map[string]any{"metadata": map[string]string{"name": k.Name, "namespace": k.Namespace, "uid": k.UID}},
		"template": template,
	})
	return b
}

// Reply is the plugin's answer.
type Reply struct {
	Node *struct {
		Phase   string `json:"phase"`
		Message string `json:"message"`
		Outputs *struct {
			Parameters []Param `json:"parameters"`
		} `json:"outputs"`
	} `json:"node"`
	Requeue string `json:"requeue"`
}

// Result is the reply's output parameter "result", "" if none.
func (r Reply) Result() string {
	if r.Node == nil || r.Node.Outputs == nil {
		return ""
	}
	for _, p := range r.Node.Outputs.Parameters {
		if p.Name == "result" {
			return p.Value
		}
	}
	return ""
}

// Call POSTs body to the plugin's handler as the agent does, with token;
// it returns the HTTP status and the decoded reply.
func Call(t testing.TB, h http.Handler, token string, body []byte) (int, Reply) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/v1/template.execute", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var rep Reply
	if rec.Code == http.StatusOK {
		dec := json.NewDecoder(strings.NewReader(rec.Body.String()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rep); err != nil {
			t.Fatalf("reply %q: %v", rec.Body.String(), err)
		}
	}
	return rec.Code, rep
}
