package plugin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/pkg/exitcode"
)

// The agent sends no node ID. A sync-and-wait job finds its node in its
// workflow's status: the not yet fulfilled Plugin node whose template and
// input parameters are the template's. Its sync id is derived from the
// node's Retry parent if it has one (whose startedAt survives node-level
// retries, so a retry adopts the operation the failed attempt started),
// else the node itself; a workflow retry resets that startedAt, so the
// retried workflow syncs anew instead of adopting the previous run's
// operation.

// wfObject is what the lookup reads of a Workflow.
type wfObject struct {
	Metadata struct {
		UID string `json:"uid"`
	} `json:"metadata"`
	Status struct {
		Nodes                    json.RawMessage `json:"nodes"` // decoded one node at a time (statusNodes)
		CompressedNodes          string          `json:"compressedNodes"`
		OffloadNodeStatusVersion string          `json:"offloadNodeStatusVersion"`
	} `json:"status"`
}

type wfNode struct {
	ID           string `json:"id"`
	Type         string `json:"type"`
	TemplateName string `json:"templateName"`
	TemplateRef  *struct {
		Template string `json:"template"`
	} `json:"templateRef"`
	Phase     string   `json:"phase"`
	StartedAt string   `json:"startedAt"`
	Children  []string `json:"children"`
	Inputs    *struct {
		Parameters []parameter `json:"parameters"`
	} `json:"inputs"`
}

// errSameNode: the only node the template matches is the one the previous
// job of this key already answered, still unfinished in the status: the
// agent asked again (its container restarted before the controller took
// the answer), and gets the same answer.
var errSameNode = errors.New("the node already has its answer")

// identity is the node a job runs for.
type identity struct {
	node   string // the Plugin node's ID
	anchor string // the node whose ID and startedAt name the sync: its Retry parent, else itself
	syncID string
}

// identify finds the job's node, retrying for LookupWindow while the node
// is not yet in the status (the controller may hand the agent a task
// before it persists the node) or the API is unreachable: after
// LookupInterval, the wait doubling up to 8 times that (each try reads the
// whole Workflow). exclude is a node that already ran this template (a
// node-level retry's failed attempt).
func (s *Server) identify(ctx context.Context, wf workflowRef, t *template, exclude string) (identity, error) {
	deadline := time.Now().Add(s.cfg.LookupWindow)
	wait := s.cfg.LookupInterval
	var last error
	for {
		id, err := s.lookup(ctx, wf, t, exclude)
		if err == nil || errors.Is(err, errSameNode) {
			return id, err
		}
		var ae *apiError
		if errors.As(err, &ae) && ae.permanent() {
			return identity{}, exitcode.With(exitcode.Failure, fmt.Errorf("reading workflow %s/%s to identify this node: %v; %s",
				wf.Namespace, wf.Name, err, permissionHint(ae.Status, wf.Namespace)))
		}
		if exitcode.Of(err) != exitcode.Transient {
			return identity{}, err
		}
		last = err
		if time.Now().After(deadline) {
			return identity{}, last
		}
		select {
		case <-ctx.Done():
			return identity{}, exitcode.With(exitcode.Transient, fmt.Errorf("the plugin stopped while identifying the node: %v", last))
		case <-time.After(wait):
		}
		wait = nextLookupWait(wait, s.cfg.LookupInterval)
	}
}

// nextLookupWait is the wait after wait: doubled, at most 8 times the
// first (interval).
func nextLookupWait(wait, interval time.Duration) time.Duration {
	return min(2*wait, 8*interval)
}

// permissionHint says what a refused Workflow read needs.
func permissionHint(status int, namespace string) string {
	sa := pluginName + "-executor-plugin"
	switch status {
	case 401:
		return "the API server rejected the token of the plugin's ServiceAccount " + sa + " (is its token Secret " + sa + ".service-account-token there?)"
	case 404:
		return "the workflow is gone (deleted while the node ran?)"
	}
	if status >= 300 && status <= 399 {
		return "the Kubernetes API server never redirects: something else answers at its address"
	}
	return "the plugin's ServiceAccount " + sa + " needs get on workflows.argoproj.io in namespace " + namespace
}

// lookup reads the workflow once: a read shared with the lookups waiting
// meanwhile, started after this lookup began (wfread.go). Errors carry
// their class: Transient to try again, anything else final.
func (s *Server) lookup(ctx context.Context, wf workflowRef, t *template, exclude string) (identity, error) {
	st, err := s.reads.get(ctx, wfKey{wf.Namespace, wf.Name, wf.UID})
	if err != nil {
		if ctx.Err() != nil && err == ctx.Err() {
			return identity{}, exitcode.With(exitcode.Transient, fmt.Errorf("reading workflow %s/%s: %v", wf.Namespace, wf.Name, err))
		}
		return identity{}, err
	}
	nodes := st.nodes
	n, excluded := findNode(nodes, t, exclude)
	if n == nil && excluded {
		return identity{node: exclude}, errSameNode
	}
	if n == nil {
		return identity{}, exitcode.With(exitcode.Transient, fmt.Errorf("workflow %s/%s has no unfinished Plugin node of template %q with these inputs", wf.Namespace, wf.Name, t.Name))
	}
	anchor := n
	for _, p := range nodes {
		if p.Type == "Retry" && slices.Contains(p.Children, n.ID) {
			anchor = p
			break
		}
	}
	sum := sha256.Sum256([]byte(wf.UID + "/" + anchor.ID + "/" + anchor.StartedAt))
	return identity{node: n.ID, anchor: anchor.ID, syncID: hex.EncodeToString(sum[:])[:16]}, nil
}

// readStatus is one read of a Workflow for the lookups sharing it. Its
// errors are the lookup's, with their classes.
func (s *Server) readStatus(ctx context.Context, key wfKey) (*wfStatus, error) {
	k, err := s.kubeClient()
	if err != nil {
		return nil, exitcode.With(exitcode.Failure, fmt.Errorf("reading workflow %s/%s: %v", key.namespace, key.name, err))
	}
	body, err := k.workflow(ctx, key.namespace, key.name)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.permanent() {
			return nil, err
		}
		return nil, exitcode.With(exitcode.Transient, fmt.Errorf("reading workflow %s/%s: %v", key.namespace, key.name, err))
	}
	var obj wfObject
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, exitcode.With(exitcode.Failure, fmt.Errorf("workflow %s/%s: not a Workflow: %v", key.namespace, key.name, err))
	}
	if obj.Metadata.UID != key.uid {
		return nil, exitcode.With(exitcode.Failure, fmt.Errorf("workflow %s/%s has uid %s, not %s: it was replaced", key.namespace, key.name, obj.Metadata.UID, key.uid))
	}
	nodes, err := statusNodes(&obj)
	if err != nil {
		return nil, exitcode.With(exitcode.Failure, fmt.Errorf("workflow %s/%s: %v", key.namespace, key.name, err))
	}
	return &wfStatus{nodes: nodes}, nil
}

// nodesLimit bounds the decompressed node status (readlimit.NodeStatus
// says why 64 MiB). The nodes are decoded as a stream, one at a time, so
// the limit costs no memory, only the time to gunzip that much. It was
// 8 MiB, read whole: about 1,300 apps.
const nodesLimit = readlimit.NodeStatus

// statusNodes are the workflow's nodes, compressed or not (Argo compresses
// them when the workflow grows large), as far as a lookup compares them:
// the unfinished Plugin nodes and the Retry parents among them (without
// their inputs), decoded one node at a time. Offloaded nodes live in
// Argo's database, which the plugin cannot read.
func statusNodes(obj *wfObject) (map[string]*wfNode, error) {
	return statusNodesLimit(obj, nodesLimit)
}

func statusNodesLimit(obj *wfObject, limit int64) (map[string]*wfNode, error) {
	st := obj.Status
	if st.OffloadNodeStatusVersion != "" {
		return nil, errors.New("its node status is offloaded to Argo's database, which the plugin cannot read; use stepMode pod for workflows this large")
	}
	if st.CompressedNodes != "" {
		zr, err := readlimit.Gunzip(base64.NewDecoder(base64.StdEncoding, strings.NewReader(st.CompressedNodes)), "status.compressedNodes", limit)
		if err != nil {
			return nil, err
		}
		nodes, err := decodeNodes(zr)
		if readlimit.IsTooLarge(err) {
			return nil, err // "status.compressedNodes: larger than the … limit"
		}
		if err != nil {
			return nil, fmt.Errorf("status.compressedNodes: %v", err)
		}
		return nodes, nil
	}
	nodes, err := decodeNodes(bytes.NewReader(st.Nodes))
	if err != nil {
		return nil, fmt.Errorf("status.nodes: %v", err)
	}
	return nodes, nil
}

// decodeNodes reads a JSON object of nodes by ID one node at a time and
// keeps what findNode and the anchor search look at: unfinished Plugin
// nodes, and Retry nodes with such a child (their children only those).
func decodeNodes(r io.Reader) (map[string]*wfNode, error) {
	nodes := map[string]*wfNode{}
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err == io.EOF || err == nil && tok == nil {
		return nodes, nil // none yet
	}
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, fmt.Errorf("not an object of nodes (%v)", tok)
	}
	var retries []*wfNode
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		id, _ := tok.(string)
		var n wfNode
		if err := dec.Decode(&n); readlimit.IsTooLarge(err) {
			return nil, err
		} else if err != nil {
			return nil, fmt.Errorf("node %q: %v", id, err)
		}
		n.ID = id
		switch {
		case n.Type == "Plugin" && unfinished(n.Phase):
			nodes[id] = &n
		case n.Type == "Retry":
			n.Inputs = nil
			retries = append(retries, &n)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	for _, p := range retries {
		p.Children = slices.DeleteFunc(p.Children, func(c string) bool { return nodes[c] == nil || nodes[c].Type != "Plugin" })
		if len(p.Children) > 0 {
			nodes[p.ID] = p
		}
	}
	return nodes, nil
}

// findNode is the unfinished Plugin node running t other than exclude,
// the most recently started if several are (identical templates share a
// job anyway); excluded reports whether exclude is such a node too.
func findNode(nodes map[string]*wfNode, t *template, exclude string) (best *wfNode, excluded bool) {
	want := t.inputs()
	for _, n := range nodes {
		if n.Type != "Plugin" || !unfinished(n.Phase) {
			continue
		}
		if n.TemplateName != t.Name && (n.TemplateRef == nil || n.TemplateRef.Template != t.Name) {
			continue
		}
		var got []string
		if n.Inputs != nil {
			got = paramPairs(n.Inputs.Parameters)
		}
		if !slices.Equal(got, want) {
			continue
		}
		if n.ID == exclude {
			excluded = true
			continue
		}
		if best == nil || n.StartedAt > best.StartedAt || (n.StartedAt == best.StartedAt && n.ID > best.ID) {
			best = n
		}
	}
	return best, excluded
}

func unfinished(phase string) bool {
	return phase == "" || phase == "Pending" || phase == "Running"
}
