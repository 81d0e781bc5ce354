package redact

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// Set is the secret values one process knows (a token read from a file, a
// kubeconfig's credentials), registered once where they are read, and the
// sinks that apply them with String's patterns: a log handler, a writer, an
// error, and a walk over a value about to be marshalled. Output written
// through these sinks needs no redaction at its call sites. The zero Set
// (and a nil *Set) masks the patterns only.
type Set struct {
	mu     sync.RWMutex
	values []string // longest first, so a secret containing another is masked whole
}

// Add registers secret values: each as given, trimmed of surrounding
// space, and base64-encoded (as the Kubernetes API carries Secret data and
// kubeconfig certificate data). Values shorter than 4 characters are
// ignored, as by String.
func (s *Set) Add(values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, v := range s.values {
		seen[v] = true
	}
	for _, v := range values {
		for _, form := range []string{v, strings.TrimSpace(v)} {
			for _, x := range []string{form, base64.StdEncoding.EncodeToString([]byte(form))} {
				if len(strings.TrimSpace(x)) >= 4 && !seen[x] {
					seen[x] = true
					s.values = append(s.values, x)
				}
			}
		}
	}
	sort.SliceStable(s.values, func(i, j int) bool { return len(s.values[i]) > len(s.values[j]) })
}

// String is String with the registered values.
func (s *Set) String(text string) string {
	if s == nil {
		return String(text)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return String(text, s.values...)
}

// Error returns err with its message redacted; errors.Is and errors.As
// still see the original.
func (s *Set) Error(err error) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: s.String(err.Error()), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Writer redacts each Write to w. The callers write whole lines (or whole
// fragments) per call, as fmt.Fprint does; a secret split over two writes
// is not recognised.
func (s *Set) Writer(w io.Writer) io.Writer { return &writer{s: s, w: w} }

type writer struct {
	s *Set
	w io.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, w.s.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Walk redacts, in place, every string reachable from ptr through exported
// fields, pointers, slices, arrays, maps (keys and values) and interfaces:
// a report or a result about to be written, whatever fields it gains.
func (s *Set) Walk(ptr any) {
	s.walk(reflect.ValueOf(ptr), map[uintptr]bool{})
}

func (s *Set) walk(v reflect.Value, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		s.walk(v.Elem(), seen)
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		// What an interface holds is not addressable: redact a copy and put
		// it back.
		e := v.Elem()
		c := reflect.New(e.Type()).Elem()
		c.Set(e)
		s.walk(c, seen)
		if v.CanSet() {
			v.Set(c)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if t.Field(i).IsExported() {
				s.walk(v.Field(i), seen)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			// []byte (json.RawMessage, data): redacted as text.
			if v.CanSet() && !v.IsNil() {
				v.SetBytes([]byte(s.String(string(v.Bytes()))))
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			s.walk(v.Index(i), seen)
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			s.walk(v.Index(i), seen)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		for _, k := range v.MapKeys() {
			val := reflect.New(v.Type().Elem()).Elem()
			val.Set(v.MapIndex(k))
			s.walk(val, seen)
			nk := reflect.New(k.Type()).Elem()
			nk.Set(k)
			s.walk(nk, seen)
			if !nk.Equal(k) {
				v.SetMapIndex(k, reflect.Value{})
			}
			v.SetMapIndex(nk, val)
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(s.String(v.String()))
		}
	}
}

// Handler wraps a log handler so that no record carries a credential: the
// message and every attribute (in groups too, and those added by With)
// are redacted, errors and other values by their text.
func (s *Set) Handler(h slog.Handler) slog.Handler { return &handler{s: s, h: h} }

type handler struct {
	s *Set
	h slog.Handler
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	nr := slog.NewRecord(r.Time, r.Level, h.s.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(h.s.attr(a))
		return true
	})
	return h.h.Handle(ctx, nr)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.s.attr(a)
	}
	return &handler{s: h.s, h: h.h.WithAttrs(out)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{s: h.s, h: h.h.WithGroup(name)}
}

func (s *Set) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, s.String(v.String()))
	case slog.KindGroup:
		as := v.Group()
		out := make([]any, len(as))
		for i, x := range as {
			out[i] = s.attr(x)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, s.String(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, s.String(x.String()))
		default:
			// Kept as it is (a JSON handler marshals it) unless its text
			// holds something to mask.
			if t := fmt.Sprint(x); s.String(t) != t {
				return slog.String(a.Key, s.String(t))
			}
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
