package step

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deployctl/deployctl/pkg/exitcode"
)

// TestMeasureBinary builds the stripped binary and runs it against the fake
// while an application stays Progressing, once with the watch stream and
// once with polling, reporting binary size, peak RSS and API calls per
// minute. It takes 2×DEPLOYSTEP_MEASURE_SECONDS (default 60), so it runs
// only with DEPLOYSTEP_MEASURE=1:
//
//	DEPLOYSTEP_MEASURE=1 go test -run TestMeasureBinary -v ./pkg/step/
func TestMeasureBinary(t *testing.T) {
	if os.Getenv("DEPLOYSTEP_MEASURE") != "1" {
		t.Skip("set DEPLOYSTEP_MEASURE=1 to build and measure the binary")
	}
	secs := 60
	if s := os.Getenv("DEPLOYSTEP_MEASURE_SECONDS"); s != "" {
		secs, _ = strconv.Atoi(s)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "deploystep")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "../../cmd/deploystep")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("binary size (CGO_ENABLED=0, -trimpath -ldflags='-s -w'): %d bytes (%.2f MB)", st.Size(), float64(st.Size())/1e6)
	if st.Size() > 15<<20 {
		t.Errorf("binary is %d bytes, over the 15 MB budget", st.Size())
	}
	tok := filepath.Join(dir, "token")
	os.WriteFile(tok, []byte(fakeToken), 0o600)

	for _, mode := range []struct {
		name   string
		stream streamMode
	}{{"watch stream", streamNormal}, {"polling (stream unavailable)", streamUnsupported}} {
		// Argo CD's default resync is 3 minutes: a Progressing app that
		// does not change produces no events while the step waits.
		f := newFakeArgo(t, scenario{exists: true, before: healthy, after: hs(progressing), resync: 3 * time.Minute, stream: mode.stream})
		cmd := exec.Command(bin, "sync-and-wait", "--app", "web-app", "--sync-timeout", "30s", "--health-timeout", fmt.Sprintf("%ds", secs))
		cmd.Env = []string{"ARGOCD_SERVER=" + f.addr, "ARGOCD_PLAINTEXT=true", "ARGOCD_TOKEN_FILE=" + tok, "RESULT_FILE=" + filepath.Join(dir, "result.json")}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		var waitStart time.Time
		var setupCalls int
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// ru_maxrss of a child counts the parent's pages shared before
		// exec, so the child's own high-water mark is read from /proc.
		hwm := make(chan int64, 1)
		go func(pid int) {
			var peak int64
			for {
				if kb, ok := vmHWM(pid); ok {
					peak = kb
				} else {
					hwm <- peak
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}(cmd.Process.Pid)
		// The health wait starts once the refresh answer is served.
		for f.count("refresh") == 0 && time.Since(start) < 30*time.Second {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		waitStart, setupCalls = time.Now(), f.totalCalls()
		err := cmd.Wait()
		waited := time.Since(waitStart)
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err == nil {
			code = 0
		}
		if code != exitcode.Timeout {
			t.Fatalf("%s: exit %d, want 4 (Progressing until the health timeout)\n%s", mode.name, code, stderr.String())
		}
		maxRSS := <-hwm
		calls := f.totalCalls() - setupCalls
		perMin := float64(calls) / waited.Minutes()
		f.mu.Lock()
		breakdown := fmt.Sprint(f.calls)
		f.mu.Unlock()
		t.Logf("%s: waited %s; peak RSS %d KiB (%.1f MiB); %d API calls while waiting = %.1f/min; all calls by kind %s",
			mode.name, waited.Round(time.Millisecond), maxRSS, float64(maxRSS)/1024, calls, perMin, breakdown)
		if maxRSS == 0 || maxRSS > 32*1024 {
			t.Errorf("%s: peak RSS %d KiB", mode.name, maxRSS)
		}
		// With the stream: a GET per stall check and a refresh per periodic
		// refresh, both tied to the health timeout (timing.forNode).
		nt := defaultTiming().forNode(time.Duration(secs) * time.Second)
		if limit := time.Minute.Seconds()/nt.stallCheck.Seconds() + time.Minute.Seconds()/nt.progressRefresh.Seconds() + 2; mode.stream == streamNormal && perMin > limit {
			t.Errorf("with the stream, %.1f calls/min while waiting, over %.1f", perMin, limit)
		}
		if mode.stream == streamUnsupported && (perMin < 40 || perMin > 75) {
			t.Errorf("polling every second should cost ~60 calls/min, got %.1f", perMin)
		}
	}
}

// vmHWM is the peak resident set size (KiB) of a running process.
func vmHWM(pid int) (int64, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n, err == nil
		}
	}
	return 0, false // a zombie has no memory lines: it has exited
}
