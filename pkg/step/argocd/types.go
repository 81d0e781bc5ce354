package argocd

import (
	"fmt"
	"time"

	"github.com/deployctl/deployctl/pkg/step/argocd/appstatus"
)

// The structs below are the subset of Argo CD's v1alpha1 types this binary
// reads, with the same JSON names. contract_test.go proves that JSON encoded
// from argo-cd's real types decodes into them with the same meaning. Times are
// metav1.Time on the wire: RFC 3339 with whole seconds, or null.

// OperationPhase is the phase of a sync operation or of a hook.
type OperationPhase string

// Operation phases.
const (
	PhaseRunning     OperationPhase = "Running"
	PhaseTerminating OperationPhase = "Terminating"
	PhaseFailed      OperationPhase = "Failed"
	PhaseError       OperationPhase = "Error"
	PhaseSucceeded   OperationPhase = "Succeeded"
)

// Completed reports whether the phase is final.
func (p OperationPhase) Completed() bool {
	return p == PhaseFailed || p == PhaseError || p == PhaseSucceeded
}

// Successful reports whether the phase is Succeeded.
func (p OperationPhase) Successful() bool { return p == PhaseSucceeded }

// ResultCode is the per-resource outcome of a sync.
type ResultCode string

// Result codes.
const (
	ResultSynced       ResultCode = "Synced"
	ResultSyncFailed   ResultCode = "SyncFailed"
	ResultPruned       ResultCode = "Pruned"
	ResultPruneSkipped ResultCode = "PruneSkipped"
)

// Application is argo-cd's v1alpha1.Application, reduced.
type Application struct {
	Metadata  ObjectMeta        `json:"metadata"`
	Spec      ApplicationSpec   `json:"spec"`
	Status    ApplicationStatus `json:"status"`
	Operation *Operation        `json:"operation,omitempty"`
}

// ObjectMeta is the part of metav1.ObjectMeta the step needs.
type ObjectMeta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace,omitempty"`
	ResourceVersion   string            `json:"resourceVersion,omitempty"`
	DeletionTimestamp *time.Time        `json:"deletionTimestamp,omitempty"`
	Finalizers        []string          `json:"finalizers,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
}

// ApplicationSpec keeps only what decides how the step syncs.
type ApplicationSpec struct {
	Project    string      `json:"project"`
	SyncPolicy *SyncPolicy `json:"syncPolicy,omitempty"`
}

// SyncPolicy is the app's own sync policy.
type SyncPolicy struct {
	Automated *SyncPolicyAutomated `json:"automated,omitempty"`
}

// SyncPolicyAutomated holds the automated-sync switches.
type SyncPolicyAutomated struct {
	Prune    bool `json:"prune,omitempty"`
	SelfHeal bool `json:"selfHeal,omitempty"`
	// Enabled false (Argo CD 3.1+) turns automated sync off and keeps the
	// switches above, inert; absent is on.
	Enabled *bool `json:"enabled,omitempty"`
}

// AutomatedPrune: the app's automated sync is on and prunes (Argo CD's
// IsAutomatedSyncEnabled and prune: `enabled: false` keeps prune, off).
func (s *ApplicationSpec) AutomatedPrune() bool {
	if s.SyncPolicy == nil || s.SyncPolicy.Automated == nil {
		return false
	}
	at := s.SyncPolicy.Automated
	return at.Prune && (at.Enabled == nil || *at.Enabled)
}

// ApplicationStatus is what the controller last observed.
type ApplicationStatus struct {
	Resources      []ResourceStatus       `json:"resources,omitempty"`
	Sync           SyncStatus             `json:"sync,omitempty"`
	Health         HealthStatus           `json:"health,omitempty"`
	Conditions     []ApplicationCondition `json:"conditions,omitempty"`
	ReconciledAt   *time.Time             `json:"reconciledAt,omitempty"`
	OperationState *OperationState        `json:"operationState,omitempty"`
}

// ApplicationCondition is an error or warning the controller attached.
type ApplicationCondition struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// HealthStatus is a health code with its message.
type HealthStatus struct {
	Status             appstatus.Health `json:"status,omitempty"`
	Message            string           `json:"message,omitempty"`
	LastTransitionTime *time.Time       `json:"lastTransitionTime,omitempty"`
}

// SyncStatus is the comparison result and the revision compared to.
type SyncStatus struct {
	Status    appstatus.Sync `json:"status"`
	Revision  string         `json:"revision,omitempty"`
	Revisions []string       `json:"revisions,omitempty"`
}

// Operation is a requested or running operation (only sync exists today).
type Operation struct {
	Sync        *SyncOperation     `json:"sync,omitempty"`
	InitiatedBy OperationInitiator `json:"initiatedBy,omitempty"`
	Info        []Info             `json:"info,omitempty"`
}

// SyncOperation holds the sync parameters.
type SyncOperation struct {
	Revision string `json:"revision,omitempty"`
	Prune    bool   `json:"prune,omitempty"`
	DryRun   bool   `json:"dryRun,omitempty"`
}

// OperationInitiator says who started an operation.
type OperationInitiator struct {
	Username  string `json:"username,omitempty"`
	Automated bool   `json:"automated,omitempty"`
}

// Info is a name/value pair attached to an operation. The step uses one to
// recognise its own operation (see HasInfo).
type Info struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// HasInfo reports whether the operation carries the info item name=value.
func (o *Operation) HasInfo(name, value string) bool {
	if o == nil {
		return false
	}
	for _, i := range o.Info {
		if i.Name == name && i.Value == value {
			return true
		}
	}
	return false
}

// InfoValue is the value of the operation's info item name ("" if none).
func (o *Operation) InfoValue(name string) string {
	if o == nil {
		return ""
	}
	for _, i := range o.Info {
		if i.Name == name {
			return i.Value
		}
	}
	return ""
}

// OperationState is the state of the current or last operation.
type OperationState struct {
	Operation  Operation            `json:"operation"`
	Phase      OperationPhase       `json:"phase"`
	Message    string               `json:"message,omitempty"`
	SyncResult *SyncOperationResult `json:"syncResult,omitempty"`
	StartedAt  time.Time            `json:"startedAt"`
	FinishedAt *time.Time           `json:"finishedAt,omitempty"`
	RetryCount int64                `json:"retryCount,omitempty"`
}

// SyncOperationResult is the outcome of a sync.
type SyncOperationResult struct {
	Resources []ResourceResult `json:"resources,omitempty"`
	Revision  string           `json:"revision"`
	Revisions []string         `json:"revisions,omitempty"`
}

// ResourceResult is the outcome of one resource (or hook) in a sync.
type ResourceResult struct {
	Group     string         `json:"group"`
	Version   string         `json:"version"`
	Kind      string         `json:"kind"`
	Namespace string         `json:"namespace"`
	Name      string         `json:"name"`
	Status    ResultCode     `json:"status,omitempty"`
	Message   string         `json:"message,omitempty"`
	HookType  string         `json:"hookType,omitempty"`
	HookPhase OperationPhase `json:"hookPhase,omitempty"`
	SyncPhase string         `json:"syncPhase,omitempty"`
}

// Failed reports whether this resource made the sync fail: it could not be
// applied, or it is a hook that failed.
func (r ResourceResult) Failed() bool {
	return r.Status == ResultSyncFailed || r.HookPhase == PhaseFailed || r.HookPhase == PhaseError
}

// Ref returns the resource's identity.
func (r ResourceResult) Ref() ResourceRef {
	return ResourceRef{Group: r.Group, Version: r.Version, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// ResourceStatus is a directly managed resource in status.resources.
type ResourceStatus struct {
	Group           string         `json:"group,omitempty"`
	Version         string         `json:"version,omitempty"`
	Kind            string         `json:"kind,omitempty"`
	Namespace       string         `json:"namespace,omitempty"`
	Name            string         `json:"name,omitempty"`
	Status          appstatus.Sync `json:"status,omitempty"`
	Health          *HealthStatus  `json:"health,omitempty"`
	Hook            bool           `json:"hook,omitempty"`
	RequiresPruning bool           `json:"requiresPruning,omitempty"`
}

// Ref returns the resource's identity.
func (r ResourceStatus) Ref() ResourceRef {
	return ResourceRef{Group: r.Group, Version: r.Version, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// ApplicationTree is the live resource tree: managed resources and their
// children (ReplicaSets, Pods, the PVCs of a StatefulSet, ...).
type ApplicationTree struct {
	Nodes         []ResourceNode `json:"nodes,omitempty"`
	OrphanedNodes []ResourceNode `json:"orphanedNodes,omitempty"`
}

// ResourceRef identifies a resource.
type ResourceRef struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	UID       string `json:"uid,omitempty"`
}

// String is "Kind namespace/name" (with the group when there is one), the
// form people read in kubectl.
func (r ResourceRef) String() string {
	kind := r.Kind
	if r.Group != "" {
		kind = r.Kind + "." + r.Group
	}
	if r.Namespace == "" {
		return fmt.Sprintf("%s %s", kind, r.Name)
	}
	return fmt.Sprintf("%s %s/%s", kind, r.Namespace, r.Name)
}

// Same reports whether two refs name the same object (version and UID aside).
func (r ResourceRef) Same(o ResourceRef) bool {
	return r.Group == o.Group && r.Kind == o.Kind && r.Namespace == o.Namespace && r.Name == o.Name
}

// ResourceNode is one node of the tree; the ref fields are inlined on the wire.
type ResourceNode struct {
	ResourceRef
	ParentRefs []ResourceRef `json:"parentRefs,omitempty"`
	Health     *HealthStatus `json:"health,omitempty"`
	CreatedAt  *time.Time    `json:"createdAt,omitempty"`
}

// ResourceDiff is an item of managed-resources; LiveState is the live object
// as a JSON string ("null" when absent).
type ResourceDiff struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	LiveState string `json:"liveState,omitempty"`
	Hook      bool   `json:"hook,omitempty"`
}

// Ref returns the resource's identity.
func (d ResourceDiff) Ref() ResourceRef {
	return ResourceRef{Group: d.Group, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name}
}

// WatchEvent is one message of the application watch stream.
type WatchEvent struct {
	Type        string      `json:"type"`
	Application Application `json:"application"`
}

// Watch event types.
const (
	EventAdded    = "ADDED"
	EventModified = "MODIFIED"
	EventDeleted  = "DELETED"
)

// OperationInProgress reports whether Argo CD is running, or about to run, an
// operation: `operation` is set until the controller finishes it.
func (a *Application) OperationInProgress() bool {
	if a.Operation != nil {
		return true
	}
	s := a.Status.OperationState
	return s != nil && (s.Phase == PhaseRunning || s.Phase == PhaseTerminating)
}
