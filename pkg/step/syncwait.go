package step

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/deployctl/deployctl/internal/readlimit"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/step/argocd"
	"github.com/deployctl/deployctl/pkg/step/check"
	"github.com/deployctl/deployctl/pkg/stepcontract"
	"github.com/deployctl/deployctl/pkg/stepresult"
)

// syncIDInfo names the info item, one value per run, the step attaches to
// its sync requests (with requestInfo, operation.go). Argo CD copies the
// request's infos into operation.info and from there into
// status.operationState.operation.info, so the step can tell its own
// operation from an earlier or concurrent one without comparing clocks
// (startedAt has whole-second precision and comes from the controller's
// clock).
const syncIDInfo = "deploystep.sync-id"

func stamp(p **time.Time) {
	now := time.Now().UTC()
	*p = &now
}

// syncAndWait is the sync-and-wait command: steps 1–5 of the contract.
func (r *runner) syncAndWait(ctx context.Context, o stepcontract.SyncAndWait, manifest []byte, res *stepresult.SyncResult) error {
	checks := make([]check.Check, 0, len(o.Checks))
	for _, c := range o.Checks {
		ck, err := check.Parse(c)
		if err != nil {
			return err
		}
		checks = append(checks, ck)
	}
	// Every wait of the node, clean-up included, ends by its deadline: the
	// sync timeout plus the health timeout, from the start.
	deadline, err := o.Limit()
	if err != nil {
		return fail(exitcode.Invalid, "--sync-timeout plus --health-timeout: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	r.t = r.t.forNode(o.HealthTimeout)

	// 0. Argo CD has the health customizations the platform relies on.
	if err := r.checkHealthCustomizations(ctx, o); err != nil {
		return err
	}

	// 1. The Application, created from the manifest when absent.
	setupCtx, cancel := context.WithTimeout(ctx, o.SyncTimeout)
	defer cancel()
	app, err := r.ensureApp(setupCtx, o.App, manifest, res)
	if err != nil {
		return err
	}
	src := r.watchApp(ctx, o.App)
	defer src.close()
	src.offer(app)

	s := &ourSync{id: o.SyncID}
	if s.id == "" {
		s.id = newSyncID()
	}
	res.SyncID = s.id
	if n := s.adoptable(app); o.SyncID != "" && n != 0 {
		// 2+3. An earlier run of this node (the plugin restarted, or a
		// node-level retry) started our operation: follow it, never sync
		// twice, never wait out our own operation as if it were another's.
		s.requests = max(n, 1)
		r.log("the operation of sync id %s (request %d) is this node's, started by an earlier run of the step: %s; following it instead of syncing again",
			s.id, n, describeOperation(app))
		res.Note("adopted this node's operation started by an earlier run of the step (sync id %s): %s", s.id, describeOperation(app))
		stamp(&res.Timings.SyncRequestedAt)
		waitCtx, cancel := context.WithTimeout(ctx, o.SyncTimeout)
		err := r.awaitOurs(waitCtx, ctx, src, s, o.SyncTimeout, res)
		cancel()
		if err != nil {
			return err
		}
	} else {
		// 2. An operation from an earlier attempt (or anyone else) still running.
		if app.OperationInProgress() {
			if err := r.awaitEarlierOperation(ctx, src, app, o.SyncTimeout, res); err != nil {
				return err
			}
		}
		// 3. Our sync, and its outcome.
		if err := r.sync(ctx, src, app, s, o.SyncTimeout, res); err != nil {
			return err
		}
	}
	for {
		// 4. Health from a reconciliation begun after the operation finished.
		healthCtx, cancel := context.WithTimeout(ctx, o.HealthTimeout)
		err := r.awaitFreshHealth(healthCtx, src, o, s, res)
		if err == errOursAgain {
			cancel()
			r.log("a further operation of this run appeared (a sync request Argo CD processed late); waiting for it")
			res.Note("a further sync operation of this run appeared; the step waited for it and judged health after it")
			waitCtx, cancel := context.WithTimeout(ctx, o.SyncTimeout)
			err = r.awaitOurs(waitCtx, ctx, src, s, o.SyncTimeout, res)
			cancel()
			if err != nil {
				return err
			}
			continue
		}
		// 5. Extra checks, within the same health deadline.
		if err == nil {
			err = r.runChecks(healthCtx, o.App, checks, res)
		}
		cancel()
		return err
	}
}

// ensureApp gets the application, creating it from the manifest if absent
// and bringing it to the manifest if it differs: Argo CD's upsert replaces
// the spec only when it changed, so a redeploy of an unchanged platform
// writes nothing (INV-6, docs/requirements.md#inv-6-idempotent-execution) and a changed spec reaches Argo CD (the compiler's
// manifest is the desired state, the same one Git holds).
func (r *runner) ensureApp(ctx context.Context, name string, manifest []byte, res *stepresult.SyncResult) (*argocd.Application, error) {
	var app *argocd.Application
	err := r.call(ctx, "get application "+name, func(ctx context.Context) (err error) {
		app, err = r.c.Get(ctx, name)
		return err
	})
	exists := err == nil
	if err != nil && !argocd.IsNotFound(err) {
		return nil, err
	}
	if manifest == nil {
		if exists {
			return app, nil
		}
		return nil, fail(exitcode.Failure, "application %q does not exist in Argo CD and no manifest was given to create it (--manifest or --manifest-base64)", name)
	}
	var before string
	if exists {
		before = app.Metadata.ResourceVersion
	}
	err = r.call(ctx, "create application "+name, func(ctx context.Context) (err error) {
		app, err = r.c.Create(ctx, manifest)
		return err
	})
	if err != nil {
		return nil, err
	}
	switch {
	case !exists:
		r.log("created application %s from the manifest", name)
		res.Created = true
		res.Note("created the application from the manifest")
	case app.Metadata.ResourceVersion != before:
		r.log("updated application %s to the manifest", name)
		res.Note("updated the application to the manifest")
	}
	return app, nil
}

// awaitEarlierOperation waits for a running operation we did not start. If it
// is still running after the sync timeout it is terminated, so our sync can
// replace it.
func (r *runner) awaitEarlierOperation(ctx context.Context, src *appSource, app *argocd.Application, timeout time.Duration, res *stepresult.SyncResult) error {
	r.log("an earlier operation is still running (%s); waiting up to %s for it", describeOperation(app), timeout)
	res.Note("waited for an earlier operation: %s", describeOperation(app))
	idle := func(v view) (bool, error) {
		if v.gone() {
			return false, fail(exitcode.Failure, "application %s was deleted while the step waited for its earlier operation", src.name)
		}
		return !v.app.OperationInProgress(), nil
	}
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := src.wait(waitCtx, idle)
	if err != errWaitDeadline {
		return err
	}
	r.log("the earlier operation is still running after %s; terminating it", timeout)
	res.Note("terminated an earlier operation stuck for more than %s", timeout)
	termCtx, cancel := context.WithTimeout(ctx, r.t.terminateGrace)
	defer cancel()
	if err := r.terminate(termCtx, src.name); err != nil {
		return err
	}
	if err := src.wait(termCtx, idle); err != errWaitDeadline {
		return err
	}
	return src.deadlineError("the earlier operation of %s did not stop within %s of being terminated", src.name, r.t.terminateGrace)
}

func describeOperation(a *argocd.Application) string {
	if a == nil {
		return "application gone"
	}
	st := a.Status.OperationState
	if st == nil {
		return "operation requested, not yet started"
	}
	s := fmt.Sprintf("phase %s since %s", st.Phase, st.StartedAt.UTC().Format(time.RFC3339))
	if st.Message != "" {
		s += ": " + st.Message
	}
	return s
}

func newSyncID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// manifestLimit bounds --manifest: a generated object is at most 1 MiB
// (README "Size limits"), and the plugin's whole request too.
const manifestLimit = 1 << 20

// loadManifest reads the Application manifest (JSON), if one was given, and
// checks that it is the application the step was asked about.
func loadManifest(o stepcontract.SyncAndWait) ([]byte, error) {
	var data []byte
	switch {
	case o.ManifestFile != "":
		b, err := readlimit.ReadFile(o.ManifestFile, manifestLimit)
		if err != nil {
			return nil, fail(exitcode.Invalid, "reading the manifest: %v", err)
		}
		data = b
	case o.ManifestBase64 != "":
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(o.ManifestBase64))
		if err != nil {
			return nil, fail(exitcode.Invalid, "--manifest-base64 is not valid base64: %v", err)
		}
		data = b
	default:
		return nil, nil
	}
	var m struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fail(exitcode.Invalid, "the manifest must be the Application as JSON: %v", err)
	}
	if m.Kind != "Application" || !strings.HasPrefix(m.APIVersion, "argoproj.io/") {
		return nil, fail(exitcode.Invalid, "the manifest is %s %s, not an argoproj.io Application", m.APIVersion, m.Kind)
	}
	if m.Metadata.Name != o.App {
		return nil, fail(exitcode.Invalid, "the manifest is for application %q, not %q", m.Metadata.Name, o.App)
	}
	return data, nil
}

// manifestNamespace is metadata.namespace of a manifest loadManifest accepted.
func manifestNamespace(manifest []byte) string {
	var m struct {
		Metadata struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(manifest, &m)
	return m.Metadata.Namespace
}
