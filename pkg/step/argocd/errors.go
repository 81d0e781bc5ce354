package argocd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/deployctl/deployctl/internal/safehttp"
)

// APIError is a non-2xx answer. Argo CD's grpc-gateway encodes errors as
// {"error": msg, "code": grpcCode, "message": msg}; proxies in front of it may
// answer with anything, so the body is only a best-effort source of Message.
type APIError struct {
	Op      string // what the client was doing, e.g. "get application x"
	Status  int    // HTTP status
	Code    int    // gRPC code when the body carried one, else 0
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s: %s (HTTP %d)", e.Op, e.Message, e.Status)
}

// NetError is a failure to get any answer: connection refused or reset, TLS,
// a request deadline, a body cut short. Always worth retrying.
type NetError struct {
	Op  string
	Err error
}

func (e *NetError) Error() string { return fmt.Sprintf("%s: %v", e.Op, e.Err) }
func (e *NetError) Unwrap() error { return e.Err }

// gRPC codes that appear in gateway error bodies.
const (
	codeDeadlineExceeded  = 4
	codeNotFound          = 5
	codePermissionDenied  = 7
	codeResourceExhausted = 8
	codeAborted           = 10
	codeUnavailable       = 14
	codeUnauthenticated   = 16
)

// operationInProgressText is util/argo.ErrAnotherOperationInProgress. Argo CD
// sends it as FailedPrecondition, which the gateway maps to HTTP 400, so the
// status code alone cannot tell it from a real bad request.
const operationInProgressText = "another operation is already in progress"

// parseAPIError reads the gRPC code of a gateway body; the message is
// safehttp.ErrorText's (redacted with secrets, then clipped).
func parseAPIError(op string, status int, body []byte, secrets ...string) *APIError {
	var gw struct {
		Code int `json:"code"`
	}
	_ = json.Unmarshal(body, &gw)
	return &APIError{Op: op, Status: status, Code: gw.Code, Message: safehttp.ErrorText(status, body, secrets...)}
}

// IsNotFound reports whether err says the object does not exist.
func IsNotFound(err error) bool {
	var e *APIError
	return errors.As(err, &e) && (e.Status == http.StatusNotFound || e.Code == codeNotFound)
}

// IsAuth reports whether the server rejected the credentials (401) or the
// permission (403). A freshly minted token or RBAC policy can take a moment
// to be accepted, so callers retry these for a bounded time.
func IsAuth(err error) bool {
	var e *APIError
	if !errors.As(err, &e) {
		return false
	}
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden ||
		e.Code == codeUnauthenticated || e.Code == codePermissionDenied
}

// IsOperationInProgress reports Argo CD's refusal to start a second operation.
func IsOperationInProgress(err error) bool {
	var e *APIError
	return errors.As(err, &e) && strings.Contains(e.Message, operationInProgressText)
}

// IsTransient reports whether retrying the same request later may succeed:
// no answer at all, 5xx, 408/409/429, or another operation in progress.
func IsTransient(err error) bool {
	var ne *NetError
	if errors.As(err, &ne) {
		return true
	}
	var e *APIError
	if !errors.As(err, &e) {
		return false
	}
	if e.Status >= 500 && e.Status != http.StatusNotImplemented {
		return true
	}
	switch e.Status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
		return true
	}
	switch e.Code {
	case codeDeadlineExceeded, codeResourceExhausted, codeAborted, codeUnavailable:
		return true
	}
	return IsOperationInProgress(err)
}

// IsUnanswered reports whether a request ended without an answer because
// a deadline passed: the client's own (the request timeout) or a proxy's
// (504, or the gateway's DeadlineExceeded). The server may still be working
// on such a request and carry it out after the client gave up on it.
func IsUnanswered(err error) bool {
	var ne *NetError
	if errors.As(err, &ne) {
		var te net.Error
		return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &te) && te.Timeout()
	}
	var e *APIError
	return errors.As(err, &e) && (e.Status == http.StatusGatewayTimeout || e.Code == codeDeadlineExceeded)
}

// IsUnsupported reports whether an endpoint does not exist on this server
// (or on a proxy in front of it): the watch stream falls back to polling.
func IsUnsupported(err error) bool {
	var e *APIError
	if !errors.As(err, &e) {
		return false
	}
	return e.Status == http.StatusNotFound || e.Status == http.StatusMethodNotAllowed || e.Status == http.StatusNotImplemented
}
