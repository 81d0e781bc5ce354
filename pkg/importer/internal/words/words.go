// Package words words counts and lists for the import's messages, the same
// way in the reader and the importer.
package words

import (
	"fmt"
	"strings"
)

// Plural is "1 app", "2 apps".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Summarize joins the first most items and counts the rest ("a, b and 3
// more").
func Summarize(items []string, most int) string {
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:most], ", ") + fmt.Sprintf(" and %d more", len(items)-most)
}
