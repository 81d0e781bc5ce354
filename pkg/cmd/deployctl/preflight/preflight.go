// Package preflight implements `deployctl preflight`: Phase 0 alone.
package preflight

import (
	"github.com/spf13/cobra"

	"github.com/deployctl/deployctl/pkg/cmd/deployctl/internal/action"
	"github.com/deployctl/deployctl/pkg/executor"
)

// NewCommand returns `deployctl preflight`.
func NewCommand() *cobra.Command {
	return action.Command(executor.ActionPreflight,
		"Check, read-only, that the cluster is ready for deploy (Phase 0) and report each check",
		`preflight runs the checks deploy starts with, and nothing else: API
reachable, credentials accepted, every permission deploy needs
(SelfSubjectAccessReview), Ready nodes (fewer than 3 warns), cluster DNS,
Argo CD and Argo Workflows present and Ready, the Argo CD token Secret, and
the generated templates present or applicable (server-side dry-run). It
changes nothing. Each check reports pass, warn or fail with the reason.`)
}
