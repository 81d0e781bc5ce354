package step

import (
	"errors"
	"fmt"
)

// Exit codes (docs/step-contract.md). The ClusterWorkflowTemplates'
// retryStrategy retries only ExitTransient.
const (
	ExitOK        = 0  // Healthy / deleted / all Healthy
	ExitFailed    = 1  // sync failed, Degraded, Missing, Unknown, Suspended not allowed, check failed
	ExitPartial   = 2  // validate: Degraded or Progressing; teardown: orphans left
	ExitUsage     = 3  // invalid arguments or configuration
	ExitTimeout   = 4  // sync, health or teardown deadline passed
	ExitTransient = 75 // API unreachable, 5xx, operation in progress, token not yet valid
)

// exitError is a failure that knows its exit code.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func fail(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// exitCode maps an error to the process exit code. An error that carries no
// code is a bug or an unforeseen answer: a permanent failure, never success.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return ExitFailed
}
