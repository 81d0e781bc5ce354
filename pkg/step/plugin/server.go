package plugin

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/internal/safehttp"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step"
	"github.com/deployctl/deployctl/pkg/step/cmdline"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// executePath is the one method the plugin serves.
const executePath = "/api/v1/template.execute"

// Limits (docs/step-contract.md "Plugin mode").
const (
	// BodyLimit bounds a request: a template with an Application manifest
	// is a few KiB to some hundred.
	BodyLimit = 1 << 20
	// DefaultMaxJobs bounds the running jobs, and separately the finished
	// ones kept to answer with.
	DefaultMaxJobs = 1000
	// DefaultMaxBytes bounds the templates of the running jobs together.
	DefaultMaxBytes = 64 << 20
	// DefaultMaxDoneBytes bounds the outcomes (result JSON and summary)
	// of the finished jobs kept to answer with, together.
	DefaultMaxDoneBytes = 64 << 20
	// MaxValidateApps bounds the apps of one validate node, and so what
	// its step holds: a platform tops out around 700 apps (README "Size
	// limits"); a result past ResultLimit is refused as well.
	MaxValidateApps = 1000
	// ResultLimit bounds one finished job's outcome: the agent writes it
	// into the Workflow's status, which etcd stores (at most 1.5 MiB).
	ResultLimit = 1 << 20
)

// Config is the server's setup; zero values take the defaults.
type Config struct {
	Token   string        // the agent's bearer token (/var/run/argo/token)
	Requeue time.Duration // how soon the agent calls again for a running node
	// Exec runs one node's step; step.Exec by default.
	Exec func(ctx context.Context, args []string, env func(string) (string, bool), log io.Writer) step.Outcome
	// KubeURL and KubeTokenFile reach the Kubernetes API (tests); empty
	// KubeURL: in-cluster.
	KubeURL, KubeTokenFile string
	// LookupWindow is how long a node not yet in the workflow's status (or
	// an unreachable API) is retried; LookupInterval the first wait between
	// tries, doubling up to 8 times it. 30 s: at 750 apps on a loaded
	// 2-core machine, the controller persisted a node more than 5 s (the
	// old window) after handing the agent its task for 142 of 702 nodes,
	// each failed attempt a node more in the status (issue 24).
	LookupWindow, LookupInterval time.Duration
	MaxJobs                      int
	MaxBytes, MaxDoneBytes       int64
	Log                          io.Writer // each node's progress lines; nil: none
}

// Server is the executor plugin's HTTP handler and its jobs.
type Server struct {
	cfg     Config
	requeue string
	ctx     context.Context // cancelled when the server stops: every job ends
	wg      sync.WaitGroup

	kubeOnce sync.Once
	kube     *kube
	kubeErr  error
	reads    *wfReads // the Workflow reads the lookups share

	// draining: the pod is going away (SIGTERM). The agent beside us may
	// still call until it is killed; a refused call would fail the node
	// (the agent retries "connection refused" only ~15 s, then Failed,
	// which retryStrategy does not retry), so the server keeps answering:
	// running jobs as usual, new ones Running without starting them (the
	// next agent's plugin runs and adopts them).
	draining atomic.Bool

	mu           sync.Mutex
	jobs         map[string]*job
	running      int
	runningBytes int64
	doneCount    int
	doneBytes    int64
	seq          uint64
}

// New returns a server whose jobs run until ctx ends.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Token == "" {
		return nil, errors.New("no bearer token: the agent's /var/run/argo/token is empty or missing")
	}
	if cfg.Requeue <= 0 {
		cfg.Requeue = time.Second
	}
	if cfg.Exec == nil {
		cfg.Exec = step.Exec
	}
	if cfg.LookupWindow <= 0 {
		cfg.LookupWindow = 30 * time.Second
	}
	if cfg.LookupInterval <= 0 {
		cfg.LookupInterval = 500 * time.Millisecond
	}
	if cfg.MaxJobs <= 0 {
		cfg.MaxJobs = DefaultMaxJobs
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxDoneBytes <= 0 {
		cfg.MaxDoneBytes = DefaultMaxDoneBytes
	}
	s := &Server{cfg: cfg, requeue: cfg.Requeue.String(), ctx: ctx, jobs: map[string]*job{}}
	s.reads = newWFReads(ctx, &s.wg, s.readStatus)
	return s, nil
}

// Wait blocks until every job has ended (after ctx is cancelled).
func (s *Server) Wait() { s.wg.Wait() }

// Drain stops starting jobs; calls go on being answered.
func (s *Server) Drain() { s.draining.Store(true) }

func (s *Server) kubeClient() (*kube, error) {
	s.kubeOnce.Do(func() {
		if s.cfg.KubeURL == "" {
			s.kube, s.kubeErr = inCluster()
			return
		}
		c, err := safehttp.New(safehttp.Config{Timeout: 10 * time.Second})
		s.kube, s.kubeErr = &kube{base: strings.TrimSuffix(s.cfg.KubeURL, "/"), client: c, tokenFile: s.cfg.KubeTokenFile}, err
	})
	return s.kube, s.kubeErr
}

// The reply (argo-workflows pkg/plugins/executor ExecuteTemplateReply).
type reply struct {
	Node    *nodeResult `json:"node,omitempty"`
	Requeue string      `json:"requeue,omitempty"`
}

type nodeResult struct {
	Phase   string   `json:"phase"`
	Message string   `json:"message,omitempty"`
	Outputs *outputs `json:"outputs,omitempty"`
}

type outputs struct {
	Parameters []outParam `json:"parameters"`
}

type outParam struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ServeHTTP: POST /api/v1/template.execute with the agent's token; anything
// else is 404 (the agent then never calls that method again), a wrong or
// missing token 403. Every answer is immediate.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != executePath {
		http.NotFound(w, r)
		return
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) != 1 {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	body, err := readlimit.ReadAll(r.Body, "the request body", BodyLimit)
	var rep reply
	if err != nil {
		rep = invalidReply("", fmt.Errorf("%v", err))
	} else {
		rep = s.execute(body)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(rep)
}

// execute answers one call.
func (s *Server) execute(body []byte) reply {
	wf, t, c, err := parseRequest(body)
	switch {
	case errors.Is(err, errNotOurs):
		return reply{}
	case err != nil:
		return invalidReply("", err)
	}
	// The command line is checked before any job exists: an invalid one
	// costs nothing but this answer.
	inv, err := cmdline.Parse(c.Args, c.environ().lookup)
	if errors.Is(err, cmdline.ErrHelp) {
		err = errors.New("-h asks for the usage text, not a step")
	}
	if err != nil {
		return invalidReply(inv.Command, err)
	}
	if inv.Command == cmdline.CmdSyncAndWait && c.Node == "" {
		return invalidReply(inv.Command, fmt.Errorf("template %q: plugin.%s.node is empty: sync-and-wait derives its sync id from its node's name, %s in the templates deployctl generates (generated by an older deployctl? generate and apply again)", t.Name, pluginName, stepcontract.NodeVar))
	}
	if n := len(inv.Validate.Apps); n > MaxValidateApps {
		return invalidReply(inv.Command, fmt.Errorf("validate of %d apps: a plugin node validates at most %d (its result must fit the Workflow object): split it", n, MaxValidateApps))
	}
	tk, err := templateKey(t.raw)
	if err != nil {
		return invalidReply(inv.Command, err)
	}
	return s.start(wf, c, inv.Command, nodeLabel(wf, t.Name, inv), wf.UID+"/"+tk, int64(len(body)))
}

// invalidReply fails the node as the pod fails an invalid invocation (exit 3).
func invalidReply(command string, err error) reply {
	if command == "" {
		command = "deploystep"
	}
	return final(step.FailedOutcome(command, exitcode.Invalid, err))
}
