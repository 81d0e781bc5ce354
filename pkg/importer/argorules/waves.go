package argorules

import (
	"math"
	"strconv"
	"strings"

	"github.com/deployctl/deployctl/pkg/importer/argorules/syncwave"
)

// SyncWave is the wave Argo CD gives an object (gitops-engine
// pkg/sync/syncwaves.Wave): argocd.argoproj.io/sync-wave when strconv.Atoi
// reads it (no trimming: " 5" is not a number), else helm.sh/hook-weight
// read the same way, else 0. has says whether either annotation gave the
// wave; unreadable says the sync-wave annotation is there but Argo CD
// cannot read it.
func SyncWave(ann map[string]string) (wave int, has, unreadable bool) {
	text, written := ann[syncwave.ArgoCDAnnotation]
	if written {
		if n, err := strconv.Atoi(text); err == nil {
			return n, true, false
		}
	}
	if text, ok := ann[helmHookWeight]; ok {
		if n, err := strconv.Atoi(text); err == nil {
			return n, true, written
		}
	}
	return 0, false, written
}

// HookWave places an object in its parent's sync, from lo to hi: a PreSync
// hook before every wave, a PostSync hook after every wave (both, for one
// that is both), hooks that run outside a sync's waves not at all
// (counts false), anything else at its sync wave.
func HookWave(ann map[string]string) (lo, hi int, counts bool) {
	w, _, _ := SyncWave(ann)
	hooks := ann["argocd.argoproj.io/hook"]
	if hooks == "" {
		hooks = ann["helm.sh/hook"]
	}
	if hooks == "" {
		return w, w, true
	}
	lo, hi = math.MaxInt, math.MinInt
	for _, h := range strings.Split(hooks, ",") {
		switch strings.TrimSpace(h) {
		case "PreSync", "pre-install", "pre-upgrade":
			lo, hi = math.MinInt, max(hi, math.MinInt)
		case "PostSync", "post-install", "post-upgrade":
			lo, hi = min(lo, math.MaxInt), math.MaxInt
		case "Sync":
			lo, hi = min(lo, w), max(hi, w)
		}
	}
	if lo > hi {
		return 0, 0, false
	}
	return lo, hi, true
}
