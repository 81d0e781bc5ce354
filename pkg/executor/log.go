package executor

import (
	"context"
	"io"
	"log/slog"
	"strings"

	"github.com/deployctl/deployctl/internal/redact"
)

// Log is the executor's structured logger. Every record carries the action,
// the phase and the component it is about ("executor" or an app's name),
// and trace_id / span_id when they were given. Nothing secret is meant to
// be passed to it, and its handler masks what slips through anyway (an API
// error echoing the request's Authorization header, a URL with a password,
// a known credential value): every record, at every level.
type Log struct {
	base *slog.Logger
}

// Phases of an action, as they appear in the "phase" attribute.
const (
	PhaseConfig    = "config"
	PhasePreflight = "preflight"
	PhaseCompile   = "compile"
	PhaseApply     = "apply"
	PhaseSubmit    = "submit"
	PhaseFollow    = "follow"
	PhaseValidate  = "validate"
	PhaseVerify    = "verify"
	PhaseReport    = "report"
)

// errorPhases are the phases whose errors the metrics report even at zero.
var errorPhases = []string{PhaseConfig, PhasePreflight, PhaseCompile, PhaseApply, PhaseSubmit, PhaseFollow, PhaseValidate, PhaseVerify}

// componentExecutor is the component of records not about one app.
const componentExecutor = "executor"

// NewLog builds the logger: format "text" or "json", to w, masking secrets
// (nil: the credential patterns only).
func NewLog(w io.Writer, action, level, format, traceID, spanID string, secrets *redact.Set) *Log {
	opts := &slog.HandlerOptions{Level: parseLevel(level)}
	var h slog.Handler
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	attrs := []slog.Attr{slog.String("action", action)}
	if traceID != "" {
		attrs = append(attrs, slog.String("trace_id", traceID))
	}
	if spanID != "" {
		attrs = append(attrs, slog.String("span_id", spanID))
	}
	return &Log{base: slog.New(secrets.Handler(h).WithAttrs(attrs))}
}

// For is the logger of one phase and component.
func (l *Log) For(phase, component string) *slog.Logger {
	return l.base.With("phase", phase, "component", component)
}

// Phase is the logger of one phase, about the executor itself.
func (l *Log) Phase(phase string) *slog.Logger { return l.For(phase, componentExecutor) }

// Enabled says whether records of level lv are written.
func (l *Log) Enabled(lv slog.Level) bool { return l.base.Enabled(context.Background(), lv) }

// apiWarnings logs the API server's Warning headers through the logger,
// masked like every record, rather than through client-go's default (klog,
// straight to stderr, where a server could echo a credential unmasked).
type apiWarnings struct{ lg *slog.Logger }

func (w apiWarnings) HandleWarningHeader(code int, agent, text string) {
	w.lg.Warn("API server warning", "code", code, "agent", agent, "warning", text)
}

// parseLevel maps LOG_LEVEL; config validation has already rejected
// anything else, so the fallback only serves the config error path.
func parseLevel(s string) slog.Level {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug
	case "warn", "warning":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
