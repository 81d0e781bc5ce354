// Package redact owns the one Clip.
package redact

func Clip(msg string) string {
	if len(msg) > 300 {
		return msg[:300] + "…"
	}
	return msg
}
