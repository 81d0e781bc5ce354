package importer

import (
	"math"
	"runtime/debug"
	"testing"
)

// The import's soft memory limit is proportional to its input, and
// GOMEMLIMIT, when set, is left as the user set it.
func TestLimitMemory(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(math.MaxInt64)
	limitMemory(8 << 20)
	if got, want := debug.SetMemoryLimit(-1), int64(32<<20+8*8<<20); got != want {
		t.Errorf("limit %d, want %d", got, want)
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30)
	limitMemory(8 << 20)
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("limit %d with GOMEMLIMIT=1GiB", got)
	}
}
