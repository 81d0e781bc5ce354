// Package duration owns time.ParseDuration.
package duration

import "time"

func Parse(s string) (time.Duration, error) { return time.ParseDuration(s) }
