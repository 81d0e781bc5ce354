package readlimit

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"
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

// A device, a named pipe or a folder where a file is expected is refused
// by its type, at once: /dev/zero is not read at all, and a pipe without a
// writer (opening it would wait forever) is not opened.
func TestReadFileRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "apps.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "ca.crt")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/dev/zero": "/dev/zero: not a regular file (a device)",
		fifo:        fifo + ": not a regular file (a named pipe)",
		link:        link + ": not a regular file (a device)",
		dir:         dir + ": not a regular file (a folder)",
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(path, 1<<20); done <- err }()
		select {
		case err := <-done:
			if !IsNotRegular(err) || err.Error() != want || Problem(path, err) != want {
				t.Errorf("%s: %v, want %q", path, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadFile blocked", path)
		}
	}
}

// Streams are read with ReadAll, bounded: /dev/zero opened on purpose.
func TestReadAllStream(t *testing.T) {
	f, err := os.Open("/dev/zero")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := ReadAll(f, "/dev/zero", 1<<20); !IsTooLarge(err) || err.Error() != "/dev/zero: larger than the 1 MiB limit" {
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

// The streaming bound: everything up to the limit is read, one byte more
// fails the read (and every read after it), whatever the chunking.
func TestNewReader(t *testing.T) {
	for _, in := range []string{"abcd", "abcde", "abcdefgh"} {
		r := NewReader(iotest.OneByteReader(strings.NewReader(in)), "nodes", 4)
		var got []byte
		var err error
		buf := make([]byte, 3)
		for err == nil {
			var n int
			n, err = r.Read(buf)
			got = append(got, buf[:n]...)
		}
		if len(in) <= 4 && (err != io.EOF || string(got) != in) {
			t.Errorf("%q: read %q, %v", in, got, err)
		}
		if len(in) > 4 {
			if !IsTooLarge(err) || string(got) != "abcd" || err.Error() != "nodes: larger than the 4 bytes limit" {
				t.Errorf("%q: read %q, %v", in, got, err)
			}
			if _, again := r.Read(buf); !IsTooLarge(again) {
				t.Errorf("%q: a read after the limit: %v", in, again)
			}
		}
	}
	big := NewReader(strings.NewReader(strings.Repeat("x", 100)), "big", 10)
	if b, err := io.ReadAll(big); !IsTooLarge(err) || len(b) != 10 {
		t.Errorf("one read past the limit: %d bytes, %v", len(b), err)
	}
}
