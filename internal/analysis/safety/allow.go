package safety

import (
	"go/ast"
	"go/token"
	"strings"

	"golang.org/x/tools/go/analysis"
)

const allowPrefix = "//safety:allow"

// An allow is one //safety:allow comment.
type allow struct {
	pos     token.Pos
	file    string
	line    int
	pattern string
	reason  string
	used    bool
}

// applyAllows reports the findings no allow keeps, and every allow that is
// malformed or keeps nothing; it returns the findings kept.
func applyAllows(pass *analysis.Pass, files []*ast.File, found []finding) []Allowed {
	allows := parseAllows(pass, files)
	var kept []Allowed
	for _, f := range found {
		p := pass.Fset.Position(f.pos)
		if a := matchAllow(allows, p, f.r.name); a != nil {
			a.used = true
			kept = append(kept, Allowed{Pos: p, Pattern: a.pattern, Reason: a.reason})
			continue
		}
		pass.Report(analysis.Diagnostic{Pos: f.pos, Category: f.r.name, Message: message(f)})
	}
	for _, a := range allows {
		if !a.used {
			pass.Reportf(a.pos, "%s %s allows nothing on this line or the next: remove it", allowPrefix, a.pattern)
		}
	}
	return kept
}

// parseAllows reads the files' //safety:allow comments, reporting those
// without a known pattern or a reason (they keep nothing).
func parseAllows(pass *analysis.Pass, files []*ast.File) []*allow {
	var out []*allow
	for _, f := range files {
		for _, g := range f.Comments {
			for _, c := range g.List {
				rest, ok := strings.CutPrefix(c.Text, allowPrefix)
				if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
					continue
				}
				fields := strings.Fields(rest)
				switch {
				case len(fields) == 0 || rules[fields[0]] == nil:
					pass.Reportf(c.Pos(), "%s needs a pattern (read, http, remove, duration, yaml, clip) and a reason", allowPrefix)
					continue
				case len(fields) == 1:
					pass.Reportf(c.Pos(), "%s %s needs a reason: say why this line is safe", allowPrefix, fields[0])
					continue
				}
				p := pass.Fset.Position(c.Pos())
				out = append(out, &allow{pos: c.Pos(), file: p.Filename, line: p.Line,
					pattern: fields[0], reason: strings.Join(fields[1:], " ")})
			}
		}
	}
	return out
}

// matchAllow is the allow for pattern on the finding's line or the line
// above it.
func matchAllow(allows []*allow, p token.Position, pattern string) *allow {
	for _, a := range allows {
		if a.file == p.Filename && a.pattern == pattern && (a.line == p.Line || a.line == p.Line-1) {
			return a
		}
	}
	return nil
}
