package duration

import (
	"fmt"
	"strings"
	"time"
)

// OverflowError is a sum of durations past Go's range: as a time.Duration
// it would wrap to a negative, already passed, deadline.
type OverflowError struct{ Terms []time.Duration }

func (e *OverflowError) Error() string {
	parts := make([]string, len(e.Terms))
	for i, d := range e.Terms {
		parts[i] = d.String()
	}
	return fmt.Sprintf("%s is longer than the longest duration there is (%s)", strings.Join(parts, " + "), Max)
}

// Sum adds ds, or reports an *OverflowError when the total passes Go's
// range either way.
func Sum(ds ...time.Duration) (time.Duration, error) {
	var total time.Duration
	for _, d := range ds {
		if (d > 0 && total > Max-d) || (d < 0 && total < -Max-1-d) {
			return 0, &OverflowError{Terms: ds}
		}
		total += d
	}
	return total, nil
}
