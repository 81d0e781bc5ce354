// Package exitcode carries a process exit code inside an error, so commands
// return errors and only main decides how the process ends.
//
// The codes are the executor's and the step's contract (docs/step-contract.md):
// 0 success, 1 failure, 2 partial, 3 invalid configuration or arguments,
// 4 timeout; the step adds 75, a transient fault its workflow retries.
// Standard library only: the step binary uses it.
package exitcode

import "errors"

const (
	OK      = 0
	Failure = 1
	Partial = 2
	Invalid = 3
	Timeout = 4
	// Transient is the step's only: API unreachable, 5xx, operation in
	// progress. The ClusterWorkflowTemplates' retryStrategy retries it alone.
	Transient = 75
)

// Error is an error with the exit code it should end the process with.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// With wraps err with a code; nil stays nil.
func With(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// Of returns the exit code for err: 0 for nil, the carried code, or 1.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Failure
}
