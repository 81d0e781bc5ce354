// Package metrics is the executor's Prometheus metrics: the text
// exposition it writes beside the report, and the /metrics server.
package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deployctl/deployctl/internal/redact"
	"github.com/deployctl/deployctl/pkg/report"
	"github.com/deployctl/deployctl/pkg/step/argocd/appstatus"
)

// Metrics are the executor's Prometheus metrics, written in the text
// exposition format (version 0.0.4) by hand: four families of one short
// run do not justify a registry, and github.com/prometheus/client_golang is
// only an indirect dependency (of Argo CD) that this package would pin as
// a direct one. The format is tested against Prometheus' own parser.
//
//	executor_action_duration_seconds  gauge    time since the action started
//	executor_action_status            gauge    1 for the action's status, 0 for the others
//	executor_component_health         gauge    1 for each component's health, 0 for the others
//	executor_errors_total             counter  errors met, by phase
type Metrics struct {
	mu       sync.Mutex
	labels   [][2]string // action, platform, environment
	start    time.Time
	end      time.Time
	status   string
	health   map[string]componentHealth
	errors   map[string]int
	hasError bool
	// errorPhases are reported even at zero.
	errorPhases []string
	// secrets are masked in label values (nil: the credential patterns).
	secrets *redact.Set
}

type componentHealth struct{ stack, health string }

// Healths are the values executor_component_health enumerates: Argo CD's
// health codes, and Absent for an Application that does not exist.
var Healths = healths()

func healths() []string {
	var out []string
	for _, h := range appstatus.Healths() {
		out = append(out, string(h))
	}
	return append(out, "Absent")
}

// New starts the clock of an action. errorPhases are reported even at
// zero, so rate() works from the start; secrets are masked in label values
// (nil: the credential patterns).
func New(action, platform, environment string, errorPhases []string, secrets *redact.Set) *Metrics {
	return &Metrics{
		labels: [][2]string{{"action", action}, {"platform", platform}, {"environment", environment}},
		start:  time.Now(), status: report.StatusRunning,
		health: map[string]componentHealth{}, errors: map[string]int{},
		errorPhases: errorPhases, secrets: secrets,
	}
}

// Error counts one error of a phase.
func (m *Metrics) Error(phase string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.errors[phase]++
}

// Errors returns the error counts.
func (m *Metrics) Errors() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for k, v := range m.errors {
		out[k] = v
	}
	return out
}

// SetHealth records a component's health ("" reads as Unknown).
func (m *Metrics) SetHealth(component, stack, health string) {
	if health == "" {
		health = string(appstatus.Unknown)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.health[component] = componentHealth{stack, health}
}

// Finish stops the clock with the action's status.
func (m *Metrics) Finish(status string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.status, m.end = status, time.Now()
}

// Render writes the exposition text, every family sorted, deterministic
// for a given state.
func (m *Metrics) Render() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b bytes.Buffer
	end := m.end
	if end.IsZero() {
		end = time.Now()
	}
	family(&b, "executor_action_duration_seconds", "gauge", "Time the action has taken, from start to its end (or to now while it runs).")
	m.sample(&b, "executor_action_duration_seconds", m.labels, nil, strconv.FormatFloat(end.Sub(m.start).Seconds(), 'f', 3, 64))

	family(&b, "executor_action_status", "gauge", "1 for the action's current status, 0 for every other status.")
	for _, s := range report.Statuses {
		m.sample(&b, "executor_action_status", m.labels, [][2]string{{"status", s}}, boolValue(s == m.status))
	}

	family(&b, "executor_component_health", "gauge", "1 for each component's (Argo CD Application's) health as last seen, 0 for the other health values.")
	comps := make([]string, 0, len(m.health))
	for c := range m.health {
		comps = append(comps, c)
	}
	sort.Strings(comps)
	for _, c := range comps {
		h := m.health[c]
		for _, v := range Healths {
			m.sample(&b, "executor_component_health", m.labels, [][2]string{{"component", c}, {"stack", h.stack}, {"health", v}}, boolValue(v == h.health))
		}
	}

	family(&b, "executor_errors_total", "counter", "Errors met by the action, by phase (API errors, failed checks, failed components).")
	phases := append([]string(nil), m.errorPhases...)
	for p := range m.errors {
		if !contains(phases, p) {
			phases = append(phases, p)
		}
	}
	sort.Strings(phases)
	for _, p := range phases {
		m.sample(&b, "executor_errors_total", m.labels, [][2]string{{"phase", p}}, strconv.Itoa(m.errors[p]))
	}
	return b.Bytes()
}

func family(b *bytes.Buffer, name, typ, help string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, escapeHelp(help), name, typ)
}

func (m *Metrics) sample(b *bytes.Buffer, name string, base, extra [][2]string, value string) {
	b.WriteString(name)
	b.WriteByte('{')
	for i, l := range append(append([][2]string(nil), base...), extra...) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, `%s="%s"`, l[0], escapeLabel(m.secrets.String(l[1])))
	}
	b.WriteString("} ")
	b.WriteString(value)
	b.WriteByte('\n')
}

// Escaping of the text format: label values escape \, " and newline; HELP
// text escapes \ and newline.
var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }

func boolValue(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// ContentType is the exposition format's media type.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Serve serves /metrics on addr until ctx ends; it returns once listening
// (or failed to), so the address is taken before the action starts.
func (m *Metrics) Serve(ctx context.Context, addr string) (net.Addr, <-chan error, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ContentType)
		_, _ = w.Write(m.Render())
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return ln.Addr(), done, nil
}

// Addr defaults the host to loopback: metrics are served to the world only
// when asked explicitly (0.0.0.0:PORT).
func Addr(s string) (string, error) {
	if !strings.Contains(s, ":") {
		s = ":" + s
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("bad port %q", port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}
