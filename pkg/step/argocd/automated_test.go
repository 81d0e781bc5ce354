package argocd

import (
	"encoding/json"
	"testing"
)

// The step's sync prunes as the app's automated policy does: not when
// Argo CD 3's `enabled: false` turns that policy off (its prune kept,
// inert), as Argo CD's IsAutomatedSyncEnabled reads it.
func TestAutomatedPrune(t *testing.T) {
	for _, tc := range []struct {
		policy string
		want   bool
	}{
		{`{}`, false},
		{`{"syncPolicy": {}}`, false},
		{`{"syncPolicy": {"automated": {}}}`, false},
		{`{"syncPolicy": {"automated": {"prune": true}}}`, true},
		{`{"syncPolicy": {"automated": {"prune": true, "enabled": true}}}`, true},
		{`{"syncPolicy": {"automated": {"prune": true, "enabled": false}}}`, false},
		{`{"syncPolicy": {"automated": {"enabled": true}}}`, false},
	} {
		var s ApplicationSpec
		if err := json.Unmarshal([]byte(tc.policy), &s); err != nil {
			t.Fatal(err)
		}
		if got := s.AutomatedPrune(); got != tc.want {
			t.Errorf("%s: prune %v, want %v", tc.policy, got, tc.want)
		}
	}
}
