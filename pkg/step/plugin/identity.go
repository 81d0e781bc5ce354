package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

// The agent sends no node ID; the template names its node. Every plugin
// call the compiler writes carries Argo's {{node.name}} and {{retries}}
// (stepcontract.Call.Node, Attempt), which Argo fills per node: the node's
// name (its Retry parent's, the same for every attempt) and the attempt.
// A sync-and-wait job's sync id is hex(sha256(uid "/" node "/"
// startedAt))[:16], startedAt the Workflow's status.startedAt, which only
// a workflow retry (argo retry, the executor's resume: Argo's
// FormulateRetryWorkflow) sets anew. So every attempt of a node, and a
// plugin restarted while it waits, adopts the operation an earlier one
// started; a retried workflow syncs anew instead of adopting the previous
// run's operation. The id needs nothing of the node status, which Argo
// compresses past about 350 apps and offloads to its database past about
// 1,150 (issue 24): the read is the Workflow's uid and startedAt.

// wfObject is what the lookup reads of a Workflow.
type wfObject struct {
	Metadata struct {
		UID string `json:"uid"`
	} `json:"metadata"`
	Status struct {
		StartedAt string `json:"startedAt"`
	} `json:"status"`
}

// identity is the node a job runs for.
type identity struct {
	node   string // the node's name: its Retry parent's when it retries
	syncID string
}

// identify derives the job's sync id, retrying for LookupWindow while the
// Workflow has no startedAt yet (the controller may hand the agent a task
// before it persists the workflow's start) or the API is unreachable:
// after LookupInterval, the wait doubling up to 8 times that.
func (s *Server) identify(ctx context.Context, wf workflowRef, node string) (identity, error) {
	deadline := time.Now().Add(s.cfg.LookupWindow)
	wait := s.cfg.LookupInterval
	var last error
	for {
		id, err := s.lookup(ctx, wf, node)
		if err == nil {
			return id, nil
		}
		var ae *apiError
		if errors.As(err, &ae) && ae.permanent() {
			return identity{}, exitcode.With(exitcode.Failure, fmt.Errorf("reading workflow %s/%s to identify node %s: %v; %s",
				wf.Namespace, wf.Name, plainName(node), err, permissionHint(ae.Status, wf.Namespace)))
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
func (s *Server) lookup(ctx context.Context, wf workflowRef, node string) (identity, error) {
	st, err := s.reads.get(ctx, wfKey{wf.Namespace, wf.Name, wf.UID})
	if err != nil {
		if ctx.Err() != nil && err == ctx.Err() {
			return identity{}, exitcode.With(exitcode.Transient, fmt.Errorf("reading workflow %s/%s: %v", wf.Namespace, wf.Name, err))
		}
		return identity{}, err
	}
	if st.startedAt == "" {
		return identity{}, exitcode.With(exitcode.Transient, fmt.Errorf("workflow %s/%s has no status.startedAt yet", wf.Namespace, wf.Name))
	}
	return identity{node: node, syncID: syncID(wf.UID, node, st.startedAt)}, nil
}

// syncID is the sync id of node in the run of workflow uid that started
// at startedAt.
func syncID(uid, node, startedAt string) string {
	sum := sha256.Sum256([]byte(uid + "/" + node + "/" + startedAt))
	return hex.EncodeToString(sum[:])[:16]
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
	return &wfStatus{startedAt: obj.Status.StartedAt}, nil
}
