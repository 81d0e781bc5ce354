package plugin

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/deployctl/deployctl/internal/redact"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step"
	"github.com/deployctl/deployctl/pkg/step/cmdline"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// Node phases of Argo's NodeResult.
const (
	phaseRunning   = "Running"
	phaseSucceeded = "Succeeded"
	phaseFailed    = "Failed"
	phaseError     = "Error" // the only phase the templates' retryStrategy retries
)

// messageMax bounds a node message: it lives in the Workflow object, as
// the pod's termination message does in the pod's status.
const messageMax = 4096

// job is one node's run of the step.
type job struct {
	key     string
	wf      workflowRef
	call    *call
	command string
	prev    *step.Outcome // the outcome of the answered job this one replaced
	prevID  string        // that job's sync id ("" for commands without one)
	size    int64         // bytes of the request, counted against the table's budget
	label   string        // names the node in log lines: never an argument's or variable's value
	kept    int64         // bytes of the finished outcome, counted against the finished budget

	mu       sync.Mutex
	syncID   string // sync-and-wait's, once derived
	progress string // the latest log line
	done     bool
	answered bool // the final reply was sent
	out      step.Outcome
	finished uint64 // order of finishing, for evicting the oldest first
}

// phaseOf maps the step's exit code to the node's phase: 0 Succeeded, 75
// (transient, what the pod's retryStrategy retries) Error, anything else
// Failed.
func phaseOf(code int) string {
	switch code {
	case exitcode.OK:
		return phaseSucceeded
	case exitcode.Transient:
		return phaseError
	}
	return phaseFailed
}

// reply is the node's state now.
func (j *job) reply(requeue string) reply {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.done {
		return running(j.progress, requeue)
	}
	j.answered = true
	return final(j.out)
}

func running(message, requeue string) reply {
	return reply{Node: &nodeResult{Phase: phaseRunning, Message: redact.Snippet(message, messageMax)}, Requeue: requeue}
}

// final is the reply of a finished step: no requeue, the agent never calls
// again for this node.
func final(out step.Outcome) reply {
	return reply{Node: &nodeResult{Phase: phaseOf(out.Code), Message: redact.Snippet(out.Summary, messageMax),
		Outputs: &outputs{Parameters: []outParam{{Name: stepcontract.OutputResult, Value: string(out.Result)}}}}}
}

// start registers a job for key, or answers the one there. A template
// names its node and attempt (identity.go), and the agent never calls
// again for a node it got a final answer for (it keeps such nodes in its
// consideredTasks). So a call for a job whose final reply was sent is
// either the agent's container restarted before the controller took the
// answer, or the node again after a workflow retry (which makes its nodes
// anew, attempt 0 first). It gets a job of its own, which for
// sync-and-wait tells the two apart by the sync id: the same id gets the
// same answer, without running the step again; a new one runs it.
// validate and teardown run again (both are idempotent).
func (s *Server) start(wf workflowRef, c *call, command, label, key string, size int64) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	prevID, prev := "", (*step.Outcome)(nil)
	if j := s.jobs[key]; j != nil {
		j.mu.Lock()
		answered, id, out := j.answered, j.syncID, j.out
		j.mu.Unlock()
		if !answered {
			return j.reply(s.requeue)
		}
		if s.draining.Load() {
			return j.reply(s.requeue) // the same final answer again
		}
		prevID, prev = id, &out
		s.drop(j)
	}
	if s.draining.Load() {
		return running("the plugin is stopping (its pod is being deleted); the next agent's plugin runs this node", s.requeue)
	}
	if s.running >= s.cfg.MaxJobs || s.runningBytes+size > s.cfg.MaxBytes {
		// Error: the node's retryStrategy tries again after its backoff.
		return final(step.FailedOutcome(command, exitcode.Transient, fmt.Errorf(
			"the plugin already runs %d nodes (%d KiB of templates), its limit (%d nodes, %d KiB); try again later",
			s.running, s.runningBytes>>10, s.cfg.MaxJobs, s.cfg.MaxBytes>>10)))
	}
	j := &job{key: key, wf: wf, call: c, command: command, label: label, prev: prev, prevID: prevID, size: size, progress: "started"}
	s.jobs[key] = j
	s.running++
	s.runningBytes += size
	s.wg.Add(1)
	go s.run(j)
	return j.reply(s.requeue)
}

// drop removes a finished job from the table. Called with s.mu held.
func (s *Server) drop(j *job) {
	delete(s.jobs, j.key)
	s.doneCount--
	s.doneBytes -= j.kept
}

// finish records the outcome, and keeps at most MaxJobs finished jobs and
// MaxDoneBytes of their outcomes: the oldest answered go first (the agent
// never asks for them again), then the oldest unanswered (its node, should
// the agent still ask, runs the step again, which adopts the operation:
// nothing is synced twice). An outcome over ResultLimit is never kept: the
// node fails saying so (the Workflow object could not hold it either).
func (s *Server) finish(j *job, out step.Outcome) {
	out = bounded(j.command, out)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	j.mu.Lock()
	j.done, j.out, j.finished = true, out, s.seq
	j.kept = int64(len(out.Result) + len(out.Summary))
	j.call = nil // the command line, manifest included, is not needed again
	j.mu.Unlock()
	s.running--
	s.runningBytes -= j.size
	s.doneCount++
	s.doneBytes += j.kept
	for s.doneCount > s.cfg.MaxJobs || s.doneBytes > s.cfg.MaxDoneBytes {
		var oldest *job
		older := func(o *job) bool {
			if oldest == nil || o.answered != oldest.answered {
				return oldest == nil || o.answered
			}
			return o.finished < oldest.finished
		}
		for _, o := range s.jobs {
			o.mu.Lock()
			if o.done && older(o) {
				oldest = o
			}
			o.mu.Unlock()
		}
		s.drop(oldest)
	}
}

// run is the job's goroutine: identify the node (sync-and-wait only: its
// sync id), then run the step as the pod would.
func (s *Server) run(j *job) {
	defer s.wg.Done()
	j.mu.Lock()
	c := j.call
	j.mu.Unlock()
	env := c.environ()
	// One agent serves many nodes: each line names its node (label), and
	// nothing else of the template: its arguments hold the manifest.
	log := &lastLine{j: j, to: s.cfg.Log, prefix: j.label + ": "}
	if j.command == cmdline.CmdSyncAndWait {
		j.setProgress("identifying the workflow node")
		id, err := s.identify(s.ctx, j.wf, c.Node)
		if err == nil && j.prev != nil && id.syncID == j.prevID {
			fmt.Fprintf(log, "node %s attempt %s asked again after its final answer (the agent restarted?); the same answer\n", plainName(id.node), plainName(c.Attempt))
			j.mu.Lock()
			j.syncID = id.syncID
			j.mu.Unlock()
			s.finish(j, *j.prev)
			return
		}
		if err != nil {
			s.finish(j, step.FailedOutcome(j.command, exitcode.Of(err), err))
			return
		}
		j.mu.Lock()
		j.syncID = id.syncID
		j.mu.Unlock()
		env[syncIDEnv] = id.syncID
		fmt.Fprintf(log, "node %s attempt %s, sync id %s\n", plainName(id.node), plainName(c.Attempt), id.syncID)
	}
	s.finish(j, s.cfg.Exec(s.ctx, c.Args, env.lookup, log))
}

func (j *job) setProgress(p string) {
	j.mu.Lock()
	j.progress = p
	j.mu.Unlock()
}

// lastLine is a job's log: each line goes to the server's log with the
// node's name, and the latest one is the node's progress message.
type lastLine struct {
	j      *job
	to     io.Writer
	prefix string
	mu     sync.Mutex
	buf    []byte
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		line := string(l.buf[:i])
		l.buf = l.buf[i+1:]
		if l.to != nil {
			io.WriteString(l.to, l.prefix+line+"\n")
		}
		// "15:04:05.000 deploystep: message": the node shows the message.
		if _, msg, ok := strings.Cut(line, " deploystep: "); ok {
			line = msg
		}
		l.j.setProgress(line)
	}
	return len(p), nil
}

// runningJobs is how many jobs are running, for tests and the benchmark.
func (s *Server) runningJobs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// bounded is out, or, when its result and summary pass ResultLimit, the
// failure that says so: kept, it would weigh on the sidecar's memory, and
// sent, on the Workflow object (etcd refuses objects over 1.5 MiB).
func bounded(command string, out step.Outcome) step.Outcome {
	n := len(out.Result) + len(out.Summary)
	if n <= ResultLimit {
		return out
	}
	return step.FailedOutcome(command, exitcode.Failure, fmt.Errorf(
		"the step's result is %d KiB, over the %d KiB a plugin node's result may hold (the Workflow object carries it); the step ended with exit code %d: split the node (fewer apps per validate)",
		n>>10, ResultLimit>>10, out.Code))
}

// nodeLabel names a node in the log: its workflow, template, command and
// app(s), each quoted unless it is a plain name. Never an argument's or a
// variable's value: the manifest, Helm values and their passwords travel
// in them.
func nodeLabel(wf workflowRef, template string, inv *cmdline.Invocation) string {
	var apps []string
	switch inv.Command {
	case cmdline.CmdSyncAndWait:
		apps = []string{inv.Sync.App}
	case cmdline.CmdTeardown:
		apps = []string{inv.Teardown.App}
	case cmdline.CmdValidate:
		apps = inv.Validate.Apps
	}
	label := plainName(wf.Namespace) + "/" + plainName(wf.Name) + " " + plainName(template) + " " + inv.Command
	for i, a := range apps {
		if i == 3 {
			return label + fmt.Sprintf(" (+%d apps)", len(apps)-i)
		}
		label += " " + plainName(a)
	}
	return label
}

// plainName is s if it is a plain name (letters, digits, . _ : -; what
// Kubernetes and Argo names are), else quoted: no name forges a log line.
func plainName(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:-", r)) {
			plain = false
			break
		}
	}
	if !plain {
		s = strconv.Quote(s)
	}
	return redact.Snippet(s, 256)
}
