// Package duration parses every duration a user or a template gives
// (spec fields, Argo CD's retry fields, step and executor flags) with the
// range checked, and adds durations with overflow reported: a time.Duration
// silently wraps past about 292 years, and a wrapped deadline is one that
// has already passed. Standard library only: the step links it.
package duration

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Max is the longest duration Go can hold (2562047h47m16.854775807s).
const Max = time.Duration(math.MaxInt64)

// ErrSyntax and ErrRange classify a refused duration (errors.Is).
var (
	ErrSyntax = errors.New("not a duration")
	ErrRange  = errors.New("out of range")
)

// Error is a refused duration: the text given and why.
type Error struct {
	Value  string
	Reason string
	Kind   error // ErrSyntax or ErrRange
}

func (e *Error) Error() string { return fmt.Sprintf("%q %s", e.Value, e.Reason) }
func (e *Error) Unwrap() error { return e.Kind }

// Parse reads a Go duration ("30s", "5m", "1h30m"), telling a text that is
// not one from one past Go's range ("3000000h").
func Parse(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err == nil {
		return d, nil
	}
	if goSyntax(s) {
		return 0, &Error{Value: s, Kind: ErrRange, Reason: "is longer than the longest duration there is (" + Max.String() + ")"}
	}
	return 0, &Error{Value: s, Kind: ErrSyntax, Reason: "is not a duration: want one such as 30s, 5m or 1h30m"}
}

// ParseArgoCD reads a duration as Argo CD reads its retry backoff
// (syncPolicy.retry.backoff.duration and maxDuration): an integer is a
// number of seconds, anything else a Go duration. Argo CD multiplies the
// seconds without a check, so "9223372037" becomes a negative wait; here
// that is ErrRange, as is an integer past int64, which Argo CD then fails
// to read as a Go duration ("missing unit").
func ParseArgoCD(s string) (time.Duration, error) {
	n, err := strconv.Atoi(s)
	if err == nil {
		if n > int(Max/time.Second) || n < -int(Max/time.Second) {
			return 0, &Error{Value: s, Kind: ErrRange, Reason: "is more seconds than Argo CD can hold: it reads it as a negative wait"}
		}
		return time.Duration(n) * time.Second, nil
	}
	if errors.Is(err, strconv.ErrRange) {
		return 0, &Error{Value: s, Kind: ErrRange, Reason: "is more seconds than Argo CD can read (it fails to parse it)"}
	}
	d, err := Parse(s)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Kind == ErrSyntax {
			e.Reason = "is not a duration: want a number of seconds (\"300\") or a duration such as 30s, 5m or 1h"
		} else if e != nil {
			e.Reason += ": Argo CD cannot parse it"
		}
		return 0, err
	}
	return d, nil
}

// goSyntax reports whether s is written as time.ParseDuration's grammar:
// [-+] then one or more of number[.fraction]unit, or "0". Parse uses it to
// tell a range error from a syntax error.
func goSyntax(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s == "0" {
		return true
	}
	if s == "" {
		return false
	}
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		whole := i
		if i < len(s) && s[i] == '.' {
			i++
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		}
		if i == 0 || (whole == 0 && i == 1) {
			return false
		}
		s = s[i:]
		unit := ""
		for _, u := range []string{"ns", "us", "µs", "μs", "ms", "s", "m", "h"} {
			if len(s) >= len(u) && s[:len(u)] == u && (len(unit) < len(u)) {
				unit = u
			}
		}
		if unit == "" {
			return false
		}
		s = s[len(unit):]
	}
	return true
}
