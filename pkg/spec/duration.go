package spec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/deployctl/deployctl/internal/duration"
)

// Duration is a time.Duration written as a Go duration string ("5m", "1h30m").
type Duration struct{ time.Duration }

// UnmarshalJSON accepts a Go duration string within Go's range.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"5m\": %w", err)
	}
	v, err := duration.Parse(s)
	if err != nil {
		// A type error lets encoding/json go on with the other fields.
		return &json.UnmarshalTypeError{Value: "string " + strconv.Quote(s), Type: reflect.TypeOf(d)}
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the canonical Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// IsZero reports an unset duration (lets omitempty-like logic stay explicit).
func (d Duration) IsZero() bool { return d.Duration == 0 }
