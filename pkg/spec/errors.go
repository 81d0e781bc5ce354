package spec

import (
	"fmt"
	"sort"
	"strings"
)

// FieldError is one problem in a spec file, located by line and field path.
type FieldError struct {
	File string
	Line int
	Path string // e.g. spec.stacks[3].apps[1].dependsOn[0]
	Msg  string
	Col  int // 1-based column, where known (byte-level errors)
}

func (e FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	if e.Path != "" {
		b.WriteString(": ")
		b.WriteString(e.Path)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one pass, in file order.
type Errors []FieldError

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// sorted orders errors by file, line, path and message so output is stable.
func (es Errors) sorted() Errors {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Msg < b.Msg
	})
	return es
}

// OrNil returns nil for an empty list, so callers can return it as an error.
func (es Errors) OrNil() error {
	if len(es) == 0 {
		return nil
	}
	return es.sorted()
}
