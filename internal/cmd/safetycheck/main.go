// Command safetycheck is `make verify`'s guard: it runs
// internal/analysis/safety on the packages named (go list patterns, ./... by
// default), prints each finding as file:line:col: message, then each
// //safety:allow in use, and exits 1 if there was a finding, 2 if a package
// could not be loaded or analyzed.
//
// It drives the analyzer with go/analysis/checker rather than singlechecker
// so that it can list the allows (the analyzer's result) without making
// them failures.
package main

import (
	"flag"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/deployctl/deployctl/internal/analysis/safety"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: safetycheck [packages]\n\n%s\n", safety.Analyzer.Doc)
	}
	flag.Parse()
	os.Exit(run("", flag.Args(), os.Stdout, os.Stderr))
}

// run checks the packages patterns match from dir ("" is the working
// directory), printing positions relative to it; it returns the exit code.
func run(dir string, patterns []string, stdout, stderr io.Writer) int {
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	// Test files are not checked, so test packages are not loaded.
	pkgs, err := packages.Load(&packages.Config{Mode: packages.LoadSyntax, Dir: dir}, patterns...)
	if err != nil {
		fmt.Fprintln(stderr, "safetycheck:", err)
		return 2
	}
	loadFailed := false
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, err := range p.Errors {
			fmt.Fprintln(stderr, err)
			loadFailed = true
		}
	})
	if loadFailed {
		return 2
	}
	graph, err := checker.Analyze([]*analysis.Analyzer{safety.Analyzer}, pkgs, nil)
	if err != nil {
		fmt.Fprintln(stderr, "safetycheck:", err)
		return 2
	}
	type finding struct {
		pos token.Position
		msg string
	}
	var findings []finding
	var allowed []safety.Allowed
	failed := false
	for _, act := range graph.Roots {
		if act.Err != nil {
			fmt.Fprintf(stderr, "safetycheck: %s: %v\n", act.Package.PkgPath, act.Err)
			failed = true
			continue
		}
		for _, d := range act.Diagnostics {
			findings = append(findings, finding{act.Package.Fset.Position(d.Pos), d.Message})
		}
		allowed = append(allowed, act.Result.([]safety.Allowed)...)
	}
	slices.SortFunc(findings, func(a, b finding) int { return comparePos(a.pos, b.pos) })
	for _, f := range findings {
		fmt.Fprintf(stdout, "%s: %s\n", where(dir, f.pos), f.msg)
	}
	slices.SortFunc(allowed, func(a, b safety.Allowed) int { return comparePos(a.Pos, b.Pos) })
	for _, a := range allowed {
		fmt.Fprintf(stdout, "allowed: %s: %s: %s\n", where(dir, a.Pos), a.Pattern, a.Reason)
	}
	switch {
	case failed:
		return 2
	case len(findings) > 0:
		fmt.Fprintf(stdout, "safetycheck: %d finding(s): use the sanctioned package named, or keep the line with //safety:allow <pattern> <reason>\n", len(findings))
		return 1
	}
	return 0
}

// where is file:line:col, the file relative to dir (or the working
// directory) when it is under it.
func where(dir string, p token.Position) string {
	base, err := filepath.Abs(dir)
	if err == nil {
		if rel, err := filepath.Rel(base, p.Filename); err == nil && !strings.HasPrefix(rel, "..") {
			p.Filename = rel
		}
	}
	return fmt.Sprintf("%s:%d:%d", p.Filename, p.Line, p.Column)
}

func comparePos(a, b token.Position) int {
	if c := strings.Compare(a.Filename, b.Filename); c != 0 {
		return c
	}
	return a.Offset - b.Offset
}
