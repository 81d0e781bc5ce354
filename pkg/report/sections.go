package report

import "time"

// The report's sections: preflight checks and the cluster inventory, the
// components, the applied objects, the environment file as understood.

// Check statuses.
const (
	Pass = "pass"
	Warn = "warn"
	Fail = "fail"
	Skip = "skip"
)

// Check is one preflight check's outcome.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Reason string `json:"reason"`
	// Code is the exit code a failure calls for: 3 when configuration or a
	// required primitive is missing, 1 when the cluster is not in a state
	// to run (not Ready, unreachable).
	Code int `json:"exitCode,omitempty"`
}

// Inventory is the cluster snapshot of Phase 0 (RFC 3.2.8, docs/requirements.md#rfc-328-phase-0-outputs).
type Inventory struct {
	ServerVersion   string   `json:"serverVersion,omitempty"`
	User            string   `json:"user,omitempty"`
	Nodes           int      `json:"nodes"`
	ReadyNodes      int      `json:"readyNodes"`
	KubeletVersions []string `json:"kubeletVersions,omitempty"`
	CPU             string   `json:"allocatableCPU,omitempty"`
	Memory          string   `json:"allocatableMemory,omitempty"`
}

// Component statuses beyond Argo's node phases.
const (
	CompNotRun      = "NotRun"      // its node never ran: something it depends on failed
	CompKept        = "Kept"        // succeeded in the resumed run, not run again
	CompDeleted     = "Deleted"     // teardown deleted it
	CompNothingToDo = "NothingToDo" // teardown found it already gone
	CompOrphans     = "Orphans"     // teardown deleted it but resources were left
	CompChecked     = "Checked"     // validate read it
	// CompOffloaded: its node's status is in Argo's database (the run's
	// node-status offload), which the executor does not read: Argo CD's
	// health is all the report knows of it.
	CompOffloaded = "Offloaded"
)

// Apply results.
const (
	Created        = "created"
	Configured     = "configured"
	Unchanged      = "unchanged"
	WouldCreate    = "would create"
	WouldConfigure = "would configure"
)

// Applied is one object's apply outcome, as reported.
type Applied struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Result    string `json:"result"`
}

// CountResults counts the apply results by kind.
func CountResults(as []Applied) map[string]int {
	n := map[string]int{}
	for _, a := range as {
		n[a.Result]++
	}
	return n
}

// EnvironmentFile is /config/environment.yaml: what differs between the
// environments one platform spec is deployed to. Unknown fields are errors.
type EnvironmentFile struct {
	Name          string `yaml:"name" json:"name"`
	Domain        string `yaml:"domain" json:"domain"`
	GitRepository string `yaml:"gitRepository" json:"gitRepository"`
	GitRevision   string `yaml:"gitRevision" json:"gitRevision"`
	// ClusterName, when set, must be the cluster of the kubeconfig's
	// current context: a guard against deploying to the wrong cluster.
	ClusterName        string `yaml:"clusterName,omitempty" json:"clusterName,omitempty"`
	ArgoCDNamespace    string `yaml:"argocdNamespace,omitempty" json:"argocdNamespace,omitempty"`
	WorkflowsNamespace string `yaml:"workflowsNamespace,omitempty" json:"workflowsNamespace,omitempty"`
	Timeouts           struct {
		Sync   time.Duration `yaml:"sync,omitempty" json:"sync,omitempty"`
		Health time.Duration `yaml:"health,omitempty" json:"health,omitempty"`
	} `yaml:"timeouts,omitempty" json:"timeouts"`
	Retries struct {
		// MaxAttempts counts the first attempt: 1 means no retry.
		MaxAttempts int           `yaml:"maxAttempts,omitempty" json:"maxAttempts,omitempty"`
		Backoff     time.Duration `yaml:"backoff,omitempty" json:"backoff,omitempty"`
	} `yaml:"retries,omitempty" json:"retries"`
}
