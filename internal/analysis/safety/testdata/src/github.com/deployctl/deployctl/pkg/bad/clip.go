package bad

import (
	"encoding/hex"
	"fmt"
	"strings"
)

const most = 300

type answer struct{ Body []byte }

func clips(msg string, body []byte, err error, a answer, s string, names []string, i int) {
	_ = msg[:300]                   // want `msg\[:300\] clips a message by hand .*: use internal/redact's Clip`
	_ = string(body)[:200]          // want `string\(body\)\[:200\] clips a message`
	_ = err.Error()[:most]          // want `err.Error\(\)\[:most\] clips a message`
	_ = a.Body[:10]                 // want `a.Body\[:10\] clips a message`
	_ = strings.TrimSpace(msg)[:10] // want `clips a message`
	_ = fmt.Sprint(names)[:20]      // want `clips a message`
	errText := s
	_ = errText[2:40]                         // want `errText\[2:40\] clips a message`
	_ = ("x: " + msg)[:40]                    // want `clips a message`
	_ = msg[:min(len(msg), 300)]              // want `msg\[:min\(len\(msg\), 300\)\] clips a message`
	_ = s[:64]                                // want `s\[:64\] clips a message`
	_ = fmt.Sprintf("%.300s", s)              // want `a precision on a string verb clips a message`
	_ = fmt.Errorf("bad answer: %-10.80q", s) // want `a precision on a string verb clips a message`

	// Not the pattern: parsing cuts, variable bounds, other types.
	_ = hex.EncodeToString(body)[:16]
	_ = s[:63]
	_ = msg[:i]
	_ = msg[i:]
	_ = names[:3]
	_ = fmt.Sprintf("%.2f %s %%.5s", 1.0, s)
	_ = fmt.Sprintf(s, 1)
}
