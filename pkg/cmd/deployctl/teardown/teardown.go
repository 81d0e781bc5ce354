// Package teardown implements `deployctl teardown`, the executor's
// reverse-order removal of the platform.
package teardown

import (
	"github.com/spf13/cobra"

	"github.com/deployctl/deployctl/pkg/cmd/deployctl/internal/action"
	"github.com/deployctl/deployctl/pkg/executor"
)

// NewCommand returns `deployctl teardown`.
func NewCommand() *cobra.Command {
	return action.Command(executor.ActionTeardown,
		"Delete the platform's apps in reverse dependency order (needs CONFIRM=<platform name>)",
		`teardown refuses (exit 3) unless CONFIRM (or --confirm) is the platform's
name. It runs the teardown workflow of the scope (the scope and everything
that depends on it): every app is deleted with cascading deletion only after
everything depending on it is gone. PersistentVolumeClaims are kept unless
PV_POLICY=delete. CustomResourceDefinitions, which Argo CD never deletes,
are kept unless CRD_POLICY=delete, which removes them (and every custom
resource of their kinds, cluster-wide) with their app. Exit 0 clean, 2
orphans left, 1 failure; tearing down an absent platform succeeds.`)
}
