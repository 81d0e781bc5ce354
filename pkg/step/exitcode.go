package step

import (
	"fmt"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

// Exit codes (docs/step-contract.md) are pkg/exitcode's: 0 Healthy /
// deleted / all Healthy; 1 sync failed, Degraded, Missing, Unknown,
// Suspended not allowed, check failed; 2 validate Degraded or Progressing,
// teardown orphans left; 3 invalid arguments or configuration; 4 a sync,
// health or teardown deadline passed; 75 (Transient) API unreachable, 5xx,
// operation in progress, token not yet valid — the only code the
// ClusterWorkflowTemplates' retryStrategy retries. An error that carries no
// code is a bug or an unforeseen answer: exitcode.Of makes it a permanent
// failure, never success.

// fail is an error with the exit code the step ends with.
func fail(code int, format string, args ...any) error {
	return exitcode.With(code, fmt.Errorf(format, args...))
}
