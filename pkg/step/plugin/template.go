package plugin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// pluginName is the plugin's name: the key under a template's `plugin:`
// and the ConfigMap deployctl-executor-plugin.
const pluginName = stepcontract.PluginName

// request is the agent's body: {"workflow":{"metadata":…},"template":…}
// (argo-workflows pkg/plugins/executor ExecuteTemplateArgs).
type request struct {
	Workflow struct {
		Metadata workflowRef `json:"metadata"`
	} `json:"workflow"`
	Template json.RawMessage `json:"template"`
}

type workflowRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	UID       string `json:"uid"`
}

// template is what the plugin reads of the resolved template.
type template struct {
	Name   string                     `json:"name"`
	Plugin map[string]json.RawMessage `json:"plugin"`
	raw    json.RawMessage            // as the agent sent it, for the job key
}

// call is the template's plugin.deployctl: the step contract's Call, the
// pod container's args and env with RESULT_FILE left out (the result
// travels in the reply), and the node and attempt Argo filled.
type call stepcontract.Call

// syncIDFlag and syncIDEnv are sync-and-wait's sync id, the plugin's to
// derive, never a template's.
var (
	syncIDFlag = stepcontract.FlagSyncID
	syncIDEnv  = stepcontract.EnvName(stepcontract.FlagSyncID)
)

// environ is the step's whole environment: the template's env, nothing of
// the sidecar's own.
func (c *call) environ() stepEnv {
	m := make(stepEnv, len(c.Env))
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}

// stepEnv is a step's environment; lookup is what cmdline.Parse and step.Exec
// read it through.
type stepEnv map[string]string

func (m stepEnv) lookup(k string) (string, bool) { v, ok := m[k]; return v, ok }

// errNotOurs: the template is another plugin's (or none's); the reply is {}.
var errNotOurs = errors.New("not a deployctl plugin template")

// parseRequest reads the body. An error other than errNotOurs is the
// node's failure: the reply says what is wrong with the template.
func parseRequest(body []byte) (workflowRef, *template, *call, error) {
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		return workflowRef{}, nil, nil, fmt.Errorf("the request is not the executor plugin's JSON: %v", err)
	}
	var t template
	if len(req.Template) == 0 || string(req.Template) == "null" {
		return req.Workflow.Metadata, nil, nil, errors.New("the request has no template")
	}
	if err := json.Unmarshal(req.Template, &t); err != nil {
		return req.Workflow.Metadata, nil, nil, fmt.Errorf("template: %v", err)
	}
	t.raw = req.Template
	raw, ok := t.Plugin[pluginName]
	if !ok {
		return req.Workflow.Metadata, &t, nil, errNotOurs
	}
	wf := req.Workflow.Metadata
	if wf.UID == "" || wf.Name == "" || wf.Namespace == "" {
		return wf, &t, nil, errors.New("the request names no workflow (metadata name, namespace and uid are required)")
	}
	var c call
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return wf, &t, nil, fmt.Errorf("template %q: plugin.%s: %v (want args, env, node and attempt)", t.Name, pluginName, err)
	}
	if len(c.Args) == 0 {
		return wf, &t, nil, fmt.Errorf("template %q: plugin.%s.args is empty: it is deploystep's command line", t.Name, pluginName)
	}
	for _, a := range c.Args {
		// Any form the flag package takes, an empty value too: an empty
		// --sync-id= would replace the derived one with a random id.
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && name == syncIDFlag {
			return wf, &t, nil, fmt.Errorf("template %q: plugin.%s.args: --sync-id is the plugin's to derive from the workflow node, not the template's", t.Name, pluginName)
		}
	}
	// Argo fills node and attempt in every node's template; a template
	// Argo did not fill names no node.
	for _, f := range []struct{ name, v string }{{"node", c.Node}, {"attempt", c.Attempt}} {
		if strings.Contains(f.v, "{{") {
			return wf, &t, nil, fmt.Errorf("template %q: plugin.%s.%s is %s, not filled by Argo", t.Name, pluginName, f.name, plainName(f.v))
		}
	}
	seen := map[string]bool{}
	for _, e := range c.Env {
		switch {
		case e.Name == "":
			return wf, &t, nil, fmt.Errorf("template %q: plugin.%s.env: a variable without a name", t.Name, pluginName)
		case seen[e.Name]:
			return wf, &t, nil, fmt.Errorf("template %q: plugin.%s.env: %s is given twice", t.Name, pluginName, e.Name)
		case e.Name == syncIDEnv:
			return wf, &t, nil, fmt.Errorf("template %q: plugin.%s.env: SYNC_ID is the plugin's to derive from the workflow node", t.Name, pluginName)
		}
		seen[e.Name] = true
	}
	return wf, &t, &c, nil
}

// templateKey is the job key's second half: the SHA-256 of the template's
// canonical JSON (object keys sorted, as encoding/json writes maps). The
// agent sends no node ID; a node's template is the same on every call.
func templateKey(raw json.RawMessage) (string, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}
