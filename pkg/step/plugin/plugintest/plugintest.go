// Package plugintest drives the executor plugin in tests as Argo's agent
// and the Kubernetes API would: a fake API server holding one Workflow
// whose start and nodes the test edits, and calls of the plugin's one
// method.
package plugintest

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
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

// StartedAt is a new Kube's Workflow's status.startedAt.
const StartedAt = "2026-11-24T04:00:00Z"

// Node is a workflow status node as Argo writes it (the plugin reads none:
// they weigh on the Workflow it reads).
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
	// What else Argo writes, which the plugin does not read (sizes).
	DisplayName string  `json:"displayName,omitempty"`
	BoundaryID  string  `json:"boundaryID,omitempty"`
	Message     string  `json:"message,omitempty"`
	FinishedAt  string  `json:"finishedAt,omitempty"`
	Outputs     *Inputs `json:"outputs,omitempty"`
}

// Inputs are a node's or template's inputs.
type Inputs struct {
	Parameters []Param `json:"parameters"`
}

// Param is one input parameter.
type Param struct {
	Name        string `json:"name"`
	Value       string `json:"value"`
	Default     string `json:"default,omitempty"`
	Description string `json:"description,omitempty"`
}

// Kube is a fake Kubernetes API serving GET of one Workflow.
type Kube struct {
	URL       string
	TokenFile string // holds APIToken, for the plugin's KubeTokenFile

	Namespace, Name, UID string

	mu        sync.Mutex
	startedAt string
	offloaded bool
	nodes     map[string]*Node
	status    int // != 0: every GET answers this status
	gets      int
	compress  bool          // the nodes as Argo's status.compressedNodes
	spec      any           // the Workflow's spec, for its size
	gate      chan struct{} // != nil: a GET waits for it after taking its answer
	cached    []byte        // the answer while nothing changed
	cacheUID  string
	sizes     [2]int // of the last answer: compressedNodes, node JSON
	inFlight  int    // GETs being answered now
	maxIn     int    // the most at once
}

// NewKube starts the fake API with an empty Workflow ns/name of uid.
func NewKube(t testing.TB, ns, name, uid string) *Kube {
	k := &Kube{Namespace: ns, Name: name, UID: uid, startedAt: StartedAt, nodes: map[string]*Node{}}
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
	k.cached = nil
}

// SetStartedAt sets the Workflow's status.startedAt ("": not started
// yet); a workflow retry sets a new one.
func (k *Kube) SetStartedAt(at string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.startedAt, k.cached = at, nil
}

// Offload serves the Workflow as Argo does once it offloaded the node
// status to its database: no nodes, an offloadNodeStatusVersion.
func (k *Kube) Offload() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.offloaded, k.cached = true, nil
}

// Compress serves the nodes gzipped and base64-encoded in
// status.compressedNodes, as Argo does once a Workflow grows large.
func (k *Kube) Compress() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.compress, k.cached = true, nil
}

// SetSpec sets the Workflow's spec (what it weighs besides its status).
func (k *Kube) SetSpec(spec any) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.spec, k.cached = spec, nil
}

// Hold makes every request from now on take its answer (the Workflow as
// it is when the GET arrives) and then wait until release is called.
func (k *Kube) Hold() (release func()) {
	gate := make(chan struct{})
	k.mu.Lock()
	k.gate = gate
	k.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			k.mu.Lock()
			if k.gate == gate {
				k.gate = nil
			}
			k.mu.Unlock()
			close(gate)
		})
	}
}

// FailWith makes every GET answer status (0: normal again).
func (k *Kube) FailWith(status int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.status = status
}

// MaxInFlight is the most requests (of any path) answered at once.
func (k *Kube) MaxInFlight() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.maxIn
}

// Gets is how many times the Workflow was read.
func (k *Kube) Gets() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.gets
}

func (k *Kube) serve(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	want := fmt.Sprintf("/apis/argoproj.io/v1alpha1/namespaces/%s/workflows/%s", k.Namespace, k.Name)
	if r.Header.Get("Authorization") != "Bearer "+APIToken {
		k.mu.Unlock()
		http.Error(w, `{"kind":"Status","code":401}`, http.StatusUnauthorized)
		return
	}
	k.inFlight++
	k.maxIn = max(k.maxIn, k.inFlight)
	status, body, gate := http.StatusNotFound, []byte(nil), k.gate
	if r.Method == http.MethodGet && r.URL.Path == want {
		k.gets++
		status, body = k.status, k.answer()
	}
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.inFlight--
		k.mu.Unlock()
	}()
	if gate != nil {
		<-gate
	}
	if status != 0 {
		http.Error(w, fmt.Sprintf(`{"kind":"Status","code":%d}`, status), status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// Sizes are the bytes of the Workflow as last served, of its
// status.compressedNodes (0 if not compressed) and of its node JSON.
func (k *Kube) Sizes() (workflow, compressed, nodes int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.cached), k.sizes[0], k.sizes[1]
}

// answer is the Workflow's JSON now; k.mu is held.
func (k *Kube) answer() []byte {
	if k.cached != nil && k.cacheUID == k.UID {
		return k.cached
	}
	status := map[string]any{"phase": "Running"}
	if k.startedAt != "" {
		status["startedAt"] = k.startedAt
	}
	plain, _ := json.Marshal(k.nodes)
	k.sizes = [2]int{0, len(plain)}
	if k.offloaded {
		status["offloadNodeStatusVersion"] = "fnv:1234567890"
	} else if k.compress {
		var zipped bytes.Buffer
		zw := gzip.NewWriter(&zipped)
		zw.Write(plain)
		zw.Close()
		status["compressedNodes"] = base64.StdEncoding.EncodeToString(zipped.Bytes())
		k.sizes[0] = len(status["compressedNodes"].(string))
	} else {
		status["nodes"] = k.nodes
	}
	wf := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
		"metadata": map[string]any{"name": k.Name, "namespace": k.Namespace, "uid": k.UID},
		"status":   status,
	}
	if k.spec != nil {
		wf["spec"] = k.spec
	}
	k.cached, _ = json.Marshal(wf)
	k.cacheUID = k.UID
	return k.cached
}

// Template is a plugin template as the compiler emits it and Argo fills
// it, for node "wf.NAME", attempt 0 (AtNode names another).
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
		"plugin":  map[string]any{"deployctl": map[string]any{"args": args, "env": ev, "node": "wf." + name, "attempt": "0"}},
		"outputs": map[string]any{"parameters": []map[string]any{{"name": "result", "valueFrom": map[string]any{"supplied": map[string]any{}}}}},
	}
}

// AtNode is template (Template's) for node's attempt: what Argo sends for
// them. An empty node leaves node out, as a template of an older deployctl.
func AtNode(template map[string]any, node, attempt string) map[string]any {
	call := map[string]any{}
	for k, v := range template["plugin"].(map[string]any)["deployctl"].(map[string]any) {
		call[k] = v
	}
	call["node"], call["attempt"] = node, attempt
	if node == "" {
		delete(call, "node")
	}
	out := map[string]any{}
	for k, v := range template {
		out[k] = v
	}
	out["plugin"] = map[string]any{"deployctl": call}
	return out
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
