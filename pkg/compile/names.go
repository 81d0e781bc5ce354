// Package compile turns a platform DAG into Kubernetes objects: the Argo
// Workflows templates and workflows that deploy, validate and tear it down,
// the Argo CD Applications, and the RBAC the workflow pods need. It returns
// typed objects; package render writes them.
package compile

import (
	"github.com/deployctl/deployctl/pkg/spec"
	"github.com/deployctl/deployctl/pkg/stepcontract"
)

// Names of the reusable ClusterWorkflowTemplates, one per step command
// (cwt.go); the template inside each is named as its command.
const (
	CWTPrefix      = spec.ReservedPrefix
	CWTSyncAndWait = CWTPrefix + stepcontract.CmdSyncAndWait
	CWTValidate    = CWTPrefix + stepcontract.CmdValidate
	CWTTeardown    = CWTPrefix + stepcontract.CmdTeardown

	// tmplJoin is the pod-less join node of a stack.
	tmplJoin = "stack-done"

	// HandoffTask is the deploy's last node: the root Application (GitOps
	// handoff). The "deployctl-" prefix is reserved, so no app can clash.
	HandoffTask = spec.ReservedPrefix + "gitops-handoff"
)

// Labels deployctl puts on what it generates and creates.
const (
	LabelPlatform  = "deployctl.dev/platform"
	LabelStack     = "deployctl.dev/stack"
	LabelAction    = "deployctl.dev/action"
	LabelSpecHash  = "deployctl.dev/spec-hash"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "deployctl"
)

// WorkflowTemplateName is the platform's WorkflowTemplate for an action.
func WorkflowTemplateName(platform, action string) string { return platform + "-" + action }
