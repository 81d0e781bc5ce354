package resdeps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/pkg/step/argocd"
)

// LiveConfig says how to reach the Argo CD API server: the connection
// settings deploystep takes (pkg/step: --server, --plaintext,
// --insecure-skip-verify, --ca-file, --root-path, --token-file).
type LiveConfig struct {
	Server             string // host:port
	Plaintext          bool
	InsecureSkipVerify bool
	CAFile             string
	RootPath           string
	TokenFile          string
	RequestTimeout     time.Duration
}

// LiveLimit bounds the target states an inventory keeps, all apps
// together: the live inventory is one import input (readlimit.Import),
// as a --manifests folder of one app is.
const LiveLimit = readlimit.Import

// Live reads what Applications deploy from the Argo CD API, read-only,
// through deploystep's own client (pkg/step/argocd: one client policy,
// internal/safehttp): GET /api/v1/applications/{name}/managed-resources,
// each item's targetState (what the app's source renders; a resource only
// live, which the next sync prunes, is not what the app deploys). Each
// answer is decoded item by item and only the objects are kept, never the
// answer; the objects of every app together are bounded by LiveLimit.
type Live struct {
	c     *argocd.Client
	kept  atomic.Int64 // bytes of target states kept, all apps
	limit int64
}

// NewLive checks the configuration and reads the token and CA files;
// every problem is reported, together.
func NewLive(cfg LiveConfig) (*Live, error) {
	c, err := argocd.New(argocd.Config{Server: cfg.Server, Plaintext: cfg.Plaintext, InsecureSkipVerify: cfg.InsecureSkipVerify,
		CAFile: cfg.CAFile, RootPath: cfg.RootPath, TokenFile: cfg.TokenFile, RequestTimeout: cfg.RequestTimeout})
	if err != nil {
		return nil, err
	}
	return &Live{c: c, limit: LiveLimit}, nil
}

// Objects are the objects Application namespace/name deploys. A resource
// only live (to be pruned) is not among them.
func (l *Live) Objects(ctx context.Context, namespace, name string) ([]Object, error) {
	app := name
	if namespace != "" {
		app = namespace + "/" + name
	}
	op := "managed resources of Application " + app
	var out []Object
	var problems []error
	i := -1
	err := l.c.ManagedTargets(ctx, namespace, name, func(it argocd.ManagedTarget) error {
		i++
		state := it.TargetState
		if state == "" || state == "null" {
			return nil
		}
		if l.kept.Add(int64(len(state))) > l.limit {
			return errOverLimit
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(state), &obj); err != nil || obj == nil {
			problems = append(problems, fmt.Errorf("%s: items[%d] (%s %s/%s): targetState is not a JSON object", op, i, it.Kind, it.Namespace, it.Name))
			return nil
		}
		out = append(out, Object{Obj: obj, File: "Application " + app + " (live)"})
		return nil
	})
	var ae *argocd.APIError
	var ne *argocd.NetError
	switch {
	case errors.As(err, &ae):
		return nil, fmt.Errorf("%s: HTTP %d: %s", op, ae.Status, ae.Message)
	case errors.As(err, &ne):
		return nil, fmt.Errorf("%s: %v", op, ne.Err)
	case errors.Is(err, errOverLimit):
		return nil, fmt.Errorf("%s: %w", op, err)
	case err != nil:
		return nil, err
	}
	return out, errors.Join(problems...)
}

// errOverLimit: the inventory passed LiveLimit; said once, however many
// reads ran into it.
var errOverLimit = fmt.Errorf("the target states of the apps read together pass %s, the limit of one import input: import a part of the Applications at a time", readlimit.Human(LiveLimit))

// AppRef names an Application to read and the app it is for.
type AppRef struct {
	App         string // the inventory's name for it (the spec app)
	Namespace   string // the Application's namespace
	Application string // its name
}

// liveReaders bounds the reads in flight: enough to hide the round trips
// of a thousand Applications, few enough not to load the API server.
const liveReaders = 8

// Inventory reads every Application of refs, eight at a time; every
// failure is reported, together, LiveLimit's once (no read starts past
// it). The apps come in refs' order.
func (l *Live) Inventory(ctx context.Context, refs []AppRef) ([]App, error) {
	out := make([]App, len(refs))
	errs := make([]error, len(refs))
	sem := make(chan struct{}, liveReaders)
	var wg sync.WaitGroup
	for i, r := range refs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if l.kept.Load() > l.limit {
				return
			}
			objs, err := l.Objects(ctx, r.Namespace, r.Application)
			out[i], errs[i] = App{Name: r.App, Objects: objs}, err
		}()
	}
	wg.Wait()
	over := false
	for i, err := range errs {
		if errors.Is(err, errOverLimit) {
			if over {
				errs[i] = nil
			}
			over = true
		}
	}
	if over {
		return nil, errors.Join(errs...)
	}
	return out, errors.Join(errs...)
}
