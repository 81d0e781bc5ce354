// Package validate implements `deployctl validate`, the executor's
// read-only health check.
package validate

import (
	"github.com/spf13/cobra"

	"github.com/deployctl/deployctl/pkg/cmd/deployctl/internal/action"
	"github.com/deployctl/deployctl/pkg/executor"
)

// NewCommand returns `deployctl validate`.
func NewCommand() *cobra.Command {
	return action.Command(executor.ActionValidate,
		"Read every app's health from Argo CD and aggregate it (read-only): exit 0 Healthy, 2 Degraded or Progressing, 1 Failed",
		`validate reads the Argo CD Application of every app of the scope and
aggregates their health (docs/requirements.md#rfc-55-aggregate-health): all Healthy → Healthy; any Progressing →
Progressing; any Degraded or Missing → Degraded; any absent or unreadable →
Failed. It changes nothing: no workflow, no pod, no apply.`)
}
