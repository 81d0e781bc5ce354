package executor

import (
	"context"
	"io"
	"log/slog"
	"strings"
)

// Log is the executor's structured logger. Every record carries the action,
// the phase and the component it is about ("executor" or an app's name),
// and trace_id / span_id when they were given. Nothing secret is ever passed
// to it: the kubeconfig, tokens and /secrets file contents stay out.
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

// componentExecutor is the component of records not about one app.
const componentExecutor = "executor"

// NewLog builds the logger: format "text" or "json", to w.
func NewLog(w io.Writer, action, level, format, traceID, spanID string) *Log {
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
	return &Log{base: slog.New(h.WithAttrs(attrs))}
}

// For is the logger of one phase and component.
func (l *Log) For(phase, component string) *slog.Logger {
	return l.base.With("phase", phase, "component", component)
}

// Phase is the logger of one phase, about the executor itself.
func (l *Log) Phase(phase string) *slog.Logger { return l.For(phase, componentExecutor) }

// Enabled says whether records of level lv are written.
func (l *Log) Enabled(lv slog.Level) bool { return l.base.Enabled(context.Background(), lv) }

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
