package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deployctl/deployctl/internal/redact"
)

// environment.yaml is decoded through safeyaml: an alias bomb is refused at
// its line before anything expands it; and read through readlimit: a named
// pipe in its place is refused at once, not waited on.
func TestEnvironmentHostile(t *testing.T) {
	dir := t.TempDir()
	bomb := "name: x\nl0: &a0 [l, l, l, l, l, l, l, l, l, l]\n"
	for i := 1; i <= 8; i++ { // ten aliases of the level before: 10^9 values
		bomb += fmt.Sprintf("l%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	path := filepath.Join(dir, "environment.yaml")
	if err := os.WriteFile(path, []byte(bomb), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, problems := readEnvironment(path, &redact.Set{})
	if len(problems) != 1 || !strings.HasPrefix(problems[0], path+": yaml: line 5: alias expansion exceeds") {
		t.Errorf("bomb: %q", problems)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}

	fifo := filepath.Join(dir, "pipe.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan []string, 1)
	go func() { _, _, p := readEnvironment(fifo, &redact.Set{}); done <- p }()
	select {
	case p := <-done:
		if len(p) != 1 || p[0] != fifo+": not a regular file (a named pipe)" {
			t.Errorf("named pipe: %q", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("environment.yaml: blocked on a named pipe")
	}
}
