package stepcontract

import (
	"time"
)

// Command names: deploystep's commands, and the names of the templates
// that run them.
const (
	CmdSyncAndWait = "sync-and-wait"
	CmdValidate    = "validate"
	CmdTeardown    = "teardown"
)

// Names the readers use: the DAG tasks' inputs that insight reads back,
// the templates' output, and the workflow parameters the executor passes
// and insight reads.
const (
	InputApp          = "app"           // sync-and-wait, teardown: the Application
	InputApps         = "apps"          // validate: the Applications, one per line
	InputAppNamespace = "app-namespace" // every command: the Applications' namespace, when not Argo CD's
	InputDeadline     = "deadline-seconds"

	// OutputResult is every template's output parameter: the step's
	// result JSON (pkg/stepresult).
	OutputResult = "result"

	// FlagSyncID is sync-and-wait's sync id: the plugin derives it (as
	// EnvName(FlagSyncID)), a template never sets it.
	FlagSyncID = "sync-id"

	WorkflowArgoCDNamespace      = "argocd-namespace"
	WorkflowHealthCustomizations = "health-customizations" // deploy: the platform's health Lua, one requirement per line
	WorkflowConfirm              = "confirm"               // teardown: must equal the platform name
	WorkflowPVPolicy             = "pv-policy"             // teardown: retain or delete
	WorkflowCRDPolicy            = "crd-policy"            // teardown: retain or delete

	// The platform's defaults (Param.Platform): the WorkflowTemplate
	// defines them, a task passes its own value only when it differs.
	WorkflowDefaultSyncTimeout   = "default-sync-timeout"     // sync-and-wait
	WorkflowDefaultHealthTimeout = "default-health-timeout"   // sync-and-wait
	WorkflowDefaultDeadline      = "default-deadline-seconds" // sync-and-wait, teardown
	WorkflowDefaultTimeout       = "default-timeout"          // teardown
	WorkflowPlatform             = "platform"                 // teardown: the platform's name (its only enum value)
	WorkflowDefaultRetryLimit    = "default-retry-limit"      // every command
	WorkflowDefaultRetryBackoff  = "default-retry-backoff"    // every command
	WorkflowDefaultRetryFactor   = "default-retry-factor"     // every command
)

// Teardown's policies for what deleting an Application leaves behind.
const (
	PolicyRetain = "retain"
	PolicyDelete = "delete"
)

// Command is one step command's value: its parameters, bound.
type Command interface {
	// Command is deploystep's command name.
	Command() string
	// Params are the rules of the command's parameters, in the template's
	// input order, bound to this value's fields.
	Params() []Param
}

// Commands are the step commands, in the order the compiler writes their
// templates.
func Commands() []Command { return []Command{&SyncAndWait{}, &Validate{}, &Teardown{}} }

// Retry is what Argo retries an attempt by: the template's retryStrategy
// (only the step's transient exit is retried). The step never reads it.
type Retry struct {
	Limit   int
	Backoff time.Duration
	Factor  int
}

// DefaultRetry is the templates' own retry (their inputs' defaults).
var DefaultRetry = Retry{Limit: 3, Backoff: 10 * time.Second, Factor: 2}

// SyncAndWait is one deploy node: create the Application if absent, sync
// it, succeed on health observed after that sync. The GitOps handoff is
// one too (the root Application, with the built-in timeouts).
type SyncAndWait struct {
	App            string
	ManifestBase64 string // the Application as base64 JSON: user text never reaches an Argo expression
	ManifestFile   string // the same as a file (never set by a template)
	SyncTimeout    time.Duration
	HealthTimeout  time.Duration
	Checks         []string // pkg/step/check syntax, one per item
	AllowSuspended bool
	// HealthCustomizations are the health Lua Argo CD must have, one
	// GROUP/KIND=sha256:HEX each: the deploy's workflow parameter, the
	// same for every node.
	HealthCustomizations []string
	// SyncID names this node's sync across runs of the step (plugin mode
	// derives it from the workflow node; a template never sets it).
	SyncID       string
	AppNamespace string // "" is Argo CD's
	Retry        Retry
}

// Command implements Command.
func (*SyncAndWait) Command() string { return CmdSyncAndWait }

// Params implements Command.
func (s *SyncAndWait) Params() []Param {
	return rules([]Param{
		{Input: InputApp, Reader: ByArg, Usage: "Application name", ptr: &s.App},
		{Input: "manifest-base64", Reader: ByArg, Usage: "the same, base64-encoded", ptr: &s.ManifestBase64,
			Description: "the Application as base64 JSON; base64 keeps user text out of Argo expressions"},
		{Input: "sync-timeout", Reader: ByArg, StepDefault: "5m0s", Usage: "how long the sync operation may take", ptr: &s.SyncTimeout,
			Workflow: WorkflowDefaultSyncTimeout, Platform: true},
		{Input: "health-timeout", Reader: ByArg, StepDefault: "5m0s", Usage: "how long to wait for Healthy after the sync", ptr: &s.HealthTimeout,
			Workflow: WorkflowDefaultHealthTimeout, Platform: true},
		{Input: InputDeadline, Reader: ArgoDeadline, Description: "hard limit of one attempt (sync + health timeouts + slack)",
			Workflow: WorkflowDefaultDeadline, Platform: true,
			derive: func() (string, error) { d, err := s.Deadline(); return Seconds(d), err }},
		{Input: "checks", Default: ptrTo(""), Reader: ByEnv, Flag: "check", Usage: "extra check: resource:GROUP/KIND/NAMESPACE/NAME or http:URL=CODES (repeatable)", ptr: &s.Checks},
		{Input: "allow-suspended", Default: ptrTo("false"), Reader: ByEnv, StepDefault: "false", Usage: "accept Suspended as healthy", ptr: &s.AllowSuspended},
		{From: FromWorkflow(WorkflowHealthCustomizations), Reader: ByEnv, Flag: "health-customization",
			Usage: "a health Lua Argo CD must have before anything syncs: GROUP/KIND=sha256:HEX (repeatable)", ptr: &s.HealthCustomizations},
		appNamespace(&s.AppNamespace),
	}, retry(&s.Retry), []Param{
		{Reader: StepOnly, Flag: "manifest", Usage: "Application manifest (JSON) to create it from when absent", ptr: &s.ManifestFile},
		{Reader: StepOnly, Flag: FlagSyncID, Usage: "this node's sync id (16-64 hex digits): adopt our operation carrying it instead of syncing again", ptr: &s.SyncID},
	})
}

// Limit is how long the node's step may take: its sync timeout plus its
// health timeout, from the start (every wait, clean-up included).
func (s *SyncAndWait) Limit() (time.Duration, error) {
	return NodeLimit(s.SyncTimeout, s.HealthTimeout)
}

// Deadline is Argo's hard limit of one attempt.
func (s *SyncAndWait) Deadline() (time.Duration, error) {
	return AttemptDeadline(s.SyncTimeout, s.HealthTimeout)
}

// Validate reads the health of a group of Applications and their
// aggregate, read-only.
type Validate struct {
	Apps         []string
	AppNamespace string
	Retry        Retry
}

// ValidateDeadline is Argo's hard limit of one validate attempt.
const ValidateDeadline = 5 * time.Minute

// Command implements Command.
func (*Validate) Command() string { return CmdValidate }

// Params implements Command.
func (v *Validate) Params() []Param {
	return rules([]Param{
		{Input: InputApps, Description: "newline-separated Application names", Reader: ByEnv, Flag: "app", Usage: "Application name (repeatable)", ptr: &v.Apps},
		{Input: InputDeadline, Default: ptrTo(Seconds(ValidateDeadline)), Reader: ArgoDeadline},
		appNamespace(&v.AppNamespace),
	}, retry(&v.Retry))
}

// Teardown deletes one Application with its resources and waits until
// they are gone.
type Teardown struct {
	App      string
	Platform string
	// Confirm, PVPolicy and CRDPolicy: the template's inputs default to
	// the teardown workflow's parameters of those names, so a submission
	// sets them; the compiler's tasks hold those expressions (FromWorkflow),
	// which equal the defaults and are left out.
	Confirm      string
	PVPolicy     string
	CRDPolicy    string
	Timeout      time.Duration
	Cascade      bool // false: the Application alone (the root Application)
	AppNamespace string
	Retry        Retry
}

// Command implements Command.
func (*Teardown) Command() string { return CmdTeardown }

// Params implements Command.
func (t *Teardown) Params() []Param {
	policies := []string{PolicyRetain, PolicyDelete}
	return rules([]Param{
		{Input: InputApp, Reader: ByArg, Usage: "Application name", ptr: &t.App},
		{Input: "platform", Reader: ByArg, Usage: "platform name", ptr: &t.Platform, Workflow: WorkflowPlatform, Platform: true},
		{Input: "confirm", Reader: ByEnv, Usage: "must equal --platform", ptr: &t.Confirm, Workflow: WorkflowConfirm},
		{Input: "pv-policy", Enum: policies, Reader: ByEnv, StepDefault: PolicyRetain,
			Usage: "retain or delete the PersistentVolumeClaims of StatefulSets", ptr: &t.PVPolicy, Workflow: WorkflowPVPolicy},
		{Input: "crd-policy", Enum: policies, Reader: ByEnv, StepDefault: PolicyRetain,
			Usage: "retain or delete the CustomResourceDefinitions the app manages (Argo CD never deletes them)", ptr: &t.CRDPolicy, Workflow: WorkflowCRDPolicy},
		{Input: "timeout", Reader: ByArg, StepDefault: "10m0s", Usage: "how long deletion may take", ptr: &t.Timeout,
			Workflow: WorkflowDefaultTimeout, Platform: true},
		{Input: InputDeadline, Reader: ArgoDeadline, Workflow: WorkflowDefaultDeadline, Platform: true,
			derive: func() (string, error) { d, err := t.Deadline(); return Seconds(d), err }},
		{Input: "cascade", Default: ptrTo("true"), Enum: []string{"true", "false"}, Reader: ByEnv, StepDefault: "true",
			Usage: "delete the app's resources with it; false orphans them (the root Application, whose children have their own teardown nodes)", ptr: &t.Cascade},
		appNamespace(&t.AppNamespace),
	}, retry(&t.Retry))
}

// Deadline is Argo's hard limit of one attempt.
func (t *Teardown) Deadline() (time.Duration, error) { return withSlack(t.Timeout) }

// rules are a command's rules, in order, completed: deploystep's flag is
// named as the template's input unless the rule says otherwise.
func rules(groups ...[]Param) []Param {
	var ps []Param
	for _, g := range groups {
		ps = append(ps, g...)
	}
	for i := range ps {
		if ps[i].Reader.Step() && ps[i].Flag == "" {
			ps[i].Flag = ps[i].Input
		}
		if ps[i].Workflow != "" {
			ps[i].Default = ptrTo(FromWorkflow(ps[i].Workflow))
		}
	}
	return ps
}

// appNamespace is every command's app-namespace: deploystep's connection
// flag, passed only for an app whose Application is not in Argo CD's
// namespace.
func appNamespace(p *string) Param {
	return Param{
		Input: InputAppNamespace, Workflow: WorkflowArgoCDNamespace, OmitZero: true,
		Description: "namespace of the Application objects (an app's applicationNamespace); default Argo CD's",
		Reader:      ByEnv, Env: "ARGOCD_APP_NAMESPACE", Global: true, ptr: p,
	}
}

// retry are every command's retry inputs, read by Argo's retryStrategy.
func retry(r *Retry) []Param {
	d := DefaultRetry
	return []Param{
		{Input: "retry-limit", StepDefault: (&Param{ptr: &d.Limit}).mustText(), Reader: ArgoRetryLimit, ptr: &r.Limit,
			Workflow: WorkflowDefaultRetryLimit, Platform: true},
		{Input: "retry-backoff", StepDefault: (&Param{ptr: &d.Backoff}).mustText(), Reader: ArgoRetryBackoff, ptr: &r.Backoff,
			Workflow: WorkflowDefaultRetryBackoff, Platform: true},
		{Input: "retry-factor", StepDefault: (&Param{ptr: &d.Factor}).mustText(), Reader: ArgoRetryFactor, ptr: &r.Factor,
			Workflow: WorkflowDefaultRetryFactor, Platform: true},
	}
}

func (p *Param) mustText() string {
	s, err := p.Text()
	if err != nil {
		panic(err)
	}
	return s
}
