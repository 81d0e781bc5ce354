package step

import (
	"os"

	"github.com/deployctl/deployctl/internal/redact"
)

// Kubernetes keeps at most 4096 bytes of a container's termination message;
// Argo shows it on the node ("main: Error (exit code 1): <message>"), so the
// failure reason is visible without the step's log.
const (
	terminationMessageMax  = 4096
	defaultTerminationPath = "/dev/termination-log"
)

// writeTerminationMessage writes line as the container's termination
// message, to $TERMINATION_MESSAGE_PATH or /dev/termination-log. The
// kubelet creates that file; where it does not exist (outside a pod) or is
// not writable nothing is written: the message is a convenience, never a
// reason to fail.
func writeTerminationMessage(env func(string) (string, bool), line string) {
	path, ok := env("TERMINATION_MESSAGE_PATH")
	if !ok || path == "" {
		path = defaultTerminationPath
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(redact.Snippet(line, terminationMessageMax))
}
