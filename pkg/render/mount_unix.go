//go:build unix

package render

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/deployctl/deployctl/internal/readlimit"
)

// mountPoint reports whether dir is on another device than its parent:
// rename(2) cannot move a mount point (EBUSY), so it cannot be replaced.
// mountPoints adds what the device cannot show (a bind mount of the same
// filesystem).
func mountPoint(dir string) bool {
	a, errA := os.Stat(dir)
	b, errB := os.Stat(filepath.Dir(real(dir)))
	if errA != nil || errB != nil {
		return false
	}
	da, okA := device(a)
	db, okB := device(b)
	return (okA && okB && da != db) || mountPoints()[real(dir)]
}

// device is the device a file is on.
func device(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true
}

// mountInfoLimit bounds the read of /proc/self/mountinfo (a few KiB; tens
// of thousands of mounts on a busy host stay far below it).
const mountInfoLimit = 64 << 20

// mountPoints are the mount points of this process's mount namespace, as
// /proc/self/mountinfo lists them (Linux; elsewhere none are known, and
// only the device tells). A bind mount of a folder of the same filesystem
// shows only here.
func mountPoints() map[string]bool {
	data, err := readlimit.ReadFile("/proc/self/mountinfo", mountInfoLimit)
	if err != nil {
		return nil
	}
	points := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		// id parent major:minor root MOUNTPOINT options … (proc(5))
		fields := strings.Fields(line)
		if len(fields) >= 5 {
			points[unescapeMount(fields[4])] = true
		}
	}
	return points
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, …).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
