// Package deploy implements `deployctl deploy`, the executor's deploy.
package deploy

import (
	"github.com/spf13/cobra"

	"github.com/deployctl/deployctl/pkg/cmd/deployctl/internal/action"
	"github.com/deployctl/deployctl/pkg/executor"
)

// NewCommand returns `deployctl deploy`.
func NewCommand() *cobra.Command {
	return action.Command(executor.ActionDeploy,
		"Preflight, apply the templates, submit or resume the deploy workflow, follow it, validate, report",
		`deploy runs the platform's deploy in dependency order, health-gated:
Phase 0 preflight (read-only), then it server-side applies the
ClusterWorkflowTemplates, RBAC, Argo CD configuration and WorkflowTemplates
(idempotent), then:
  - resumes the last run if it failed with the same spec (only the failed
    and not-yet-run apps run again; succeeded apps are not synced again),
  - follows a run of the same spec that is still running,
  - does nothing when the last run of the same spec succeeded and every app
    is Healthy and Synced (--force-run runs anyway),
  - else submits a new run (by workflowTemplateRef; --submit=inline puts
    the WorkflowTemplate's spec in the run instead, for platforms past
    about 800 apps);
follows it to the end, reads every app's health from Argo CD and writes the
status report and metrics. DRY_RUN=true shows what would be applied and run.`)
}
