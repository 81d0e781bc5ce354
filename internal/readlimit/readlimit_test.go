package readlimit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadAllRefusesOneByteMore(t *testing.T) {
	if b, err := ReadAll(strings.NewReader("abcd"), "x", 4); err != nil || string(b) != "abcd" {
		t.Fatalf("at the limit: %q %v", b, err)
	}
	_, err := ReadAll(strings.NewReader("abcde"), "stdin", 4)
	if !IsTooLarge(err) || err.Error() != "stdin: larger than the 4 bytes limit" {
		t.Fatalf("over the limit: %v", err)
	}
}

func TestReadFileDevice(t *testing.T) {
	// /dev/zero never ends: the bounded reader must stop it.
	_, err := ReadFile("/dev/zero", 1<<20)
	if !IsTooLarge(err) || err.Error() != "/dev/zero: larger than the 1 MiB limit" {
		t.Fatalf("/dev/zero: %v", err)
	}
}

func TestReadFileRegularBySize(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, make([]byte, 2048), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p, 1024); !IsTooLarge(err) {
		t.Fatalf("want too large, got %v", err)
	}
	if b, err := ReadFile(p, 4096); err != nil || len(b) != 2048 {
		t.Fatalf("%d %v", len(b), err)
	}
}

func TestProblem(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := os.ReadFile(missing)
	if got, want := Problem(missing, err), missing+": no such file or directory"; got != want {
		t.Errorf("Problem = %q, want %q (the path once)", got, want)
	}
	big := &TooLargeError{Name: "big.yaml", Limit: Spec}
	if got := Problem("big.yaml", big); got != big.Error() {
		t.Errorf("Problem = %q, want %q", got, big.Error())
	}
}
