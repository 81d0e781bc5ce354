package livestate

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/pkg/stepcontract"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

// Hydrate puts a Workflow's node status back into status.nodes when Argo
// keeps it gzipped in status.compressedNodes (it does once the object would
// pass its 1 MiB: a deploy of about 350 apps and more), as Argo's
// packer.DecompressWorkflow does for its server and CLI, but bounded by
// readlimit.NodeStatus: the object is anyone's who may write Workflows in
// the namespace, and a few hundred KB of gzip can inflate to gigabytes.
// Every reader of a run's nodes reads a hydrated Workflow; one written back
// is compressed again first (the executor's resume). Nodes offloaded to
// Argo's database (status.offloadNodeStatusVersion) are not in the object
// at all: Hydrate leaves them, and the readers say so.
func Hydrate(wf *wfv1.Workflow) error {
	if len(wf.Status.Nodes) > 0 || wf.Status.CompressedNodes == "" {
		return nil
	}
	fail := func(err error) error {
		return fmt.Errorf("workflow %s: reading status.compressedNodes: %w", wf.Name, err)
	}
	zr, err := readlimit.Gunzip(base64.NewDecoder(base64.StdEncoding, strings.NewReader(wf.Status.CompressedNodes)), "status.compressedNodes", readlimit.NodeStatus)
	if err != nil {
		return fail(err)
	}
	var nodes wfv1.Nodes
	if err := json.NewDecoder(zr).Decode(&nodes); err != nil {
		return fail(err)
	}
	wf.Status.Nodes, wf.Status.CompressedNodes = nodes, ""
	return nil
}

// TaskNodes maps each task of the workflow's top-level DAG to its node: the
// Retry node for tasks with a retryStrategy (its children are the
// attempts), the Pod or Suspend node otherwise.
//
// A task's node is named WORKFLOW.TASK. Argo's task names are letters,
// digits and '-', so a display name with '(', ')' or '.' is never a task:
// it is a retry attempt ("TASK(0)", whose name is WORKFLOW.TASK(0) too) or
// a node below one, and is left out.
func TaskNodes(wf *wfv1.Workflow) map[string]*wfv1.NodeStatus {
	out := map[string]*wfv1.NodeStatus{}
	for id := range wf.Status.Nodes {
		n := wf.Status.Nodes[id]
		if n.DisplayName == "" || strings.ContainsAny(n.DisplayName, "().") || n.Name != wf.Name+"."+n.DisplayName {
			continue
		}
		out[n.DisplayName] = &n
	}
	return out
}

// Attempts are a task node's pod attempts, oldest first.
func Attempts(wf *wfv1.Workflow, n *wfv1.NodeStatus) []*wfv1.NodeStatus {
	if n.Type != wfv1.NodeTypeRetry {
		return []*wfv1.NodeStatus{n}
	}
	var out []*wfv1.NodeStatus
	for _, id := range n.Children {
		if c, ok := wf.Status.Nodes[id]; ok {
			out = append(out, &c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt.Before(&out[j].StartedAt) })
	return out
}

// ResultOf is a task's step result (its output parameter `result`): the
// task node's own, else that of the latest attempt that wrote one (a failed
// Retry node has none itself); nil when there is none.
func ResultOf(wf *wfv1.Workflow, n *wfv1.NodeStatus) *stepresult.Result {
	var out *stepresult.Result
	eachResult(wf, n, func(raw []byte) bool {
		r, err := stepresult.Parse(raw)
		out = r
		return err == nil
	})
	return out
}

// ValidationOf is a validate task's step result, found as ResultOf finds
// one: each app's health and sync as the step read them, and their
// aggregate. Nil when the task wrote none, or not a validate step's (the
// template's default "{}" when the step never ran).
func ValidationOf(wf *wfv1.Workflow, n *wfv1.NodeStatus) *stepresult.ValidateResult {
	var out *stepresult.ValidateResult
	eachResult(wf, n, func(raw []byte) bool {
		var r stepresult.ValidateResult
		if json.Unmarshal(raw, &r) != nil || r.Command != stepcontract.CmdValidate {
			return false
		}
		out = &r
		return true
	})
	return out
}

// eachResult hands take the `result` output parameters of a task node,
// then of its attempts newest first, until take accepts one.
func eachResult(wf *wfv1.Workflow, n *wfv1.NodeStatus, take func([]byte) bool) {
	cands := []*wfv1.NodeStatus{n}
	as := Attempts(wf, n)
	for i := len(as) - 1; i >= 0; i-- {
		cands = append(cands, as[i])
	}
	for _, c := range cands {
		if c.Outputs == nil {
			continue
		}
		for _, p := range c.Outputs.Parameters {
			if p.Name == stepcontract.OutputResult && p.Value != nil && take([]byte(p.Value.String())) {
				return
			}
		}
	}
}

// MessageOf is why a task's node ended as it did, as Argo shows it on the
// attempt: a Retry node's own message is Argo's verdict on retrying
// ("retryStrategy.expression evaluated to false", "No more retries left"),
// so the latest attempt's message is taken when it has one. An attempt's
// message is the step's in both step modes: in pod mode Argo's "main:
// Error (exit code 1): <termination message>", in plugin mode the
// plugin's reply (or Argo's agent's own, e.g. "no plugin executed the
// template").
func MessageOf(wf *wfv1.Workflow, n *wfv1.NodeStatus) string {
	if n.Type == wfv1.NodeTypeRetry {
		as := Attempts(wf, n)
		for i := len(as) - 1; i >= 0; i-- {
			if as[i].Message != "" {
				return as[i].Message
			}
		}
	}
	return n.Message
}
