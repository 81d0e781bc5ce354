// Package safety is the guard `make verify` runs against the classes of
// defect that came back in every new surface (issue 22): unbounded reads,
// HTTP clients outside the shared policy, removing or renaming paths,
// durations parsed without overflow checks, YAML decoded without the alias
// bound, and messages clipped by hand. Each class has one sanctioned package
// that owns its safe version; the pattern anywhere else is a finding.
//
// Patterns (allow name, sanctioned package):
//
//	read      io.ReadAll, os.ReadFile, ioutil.ReadAll, ioutil.ReadFile;
//	          gzip, zlib and flate readers; Argo's packer.DecompressWorkflow
//	          and file.DecodeDecompressString, GetGzipReader                 internal/readlimit
//	http      http.Client or http.Transport values (literal, new, variable),
//	          http.DefaultClient, http.DefaultTransport,
//	          http.Get, http.Post, http.Head, http.PostForm                  internal/safehttp
//	remove    os.RemoveAll, os.Rename                                        internal/atomicfile, pkg/render
//	duration  time.ParseDuration                                             internal/duration
//	yaml      Unmarshal, UnmarshalStrict, NewDecoder of gopkg.in/yaml.v2/v3 and
//	          go.yaml.in/yaml/v2/v3; sigs.k8s.io/yaml's Unmarshal,
//	          UnmarshalStrict, YAMLToJSON(Strict); apimachinery's util/yaml
//	          decoders                                                       internal/safeyaml
//	clip      hand-written clipping of a message (see checkClip)             internal/redact
//
// Any use counts, called or not (a function value passed along is caught
// too), under any import name. Test files are not checked.
//
// A line that must keep a pattern says why, on the line itself or the line
// above:
//
//	//safety:allow <pattern> <reason>
//
// An allow without a reason, with an unknown pattern, or that allows nothing
// is a finding itself; every allow used is in the analyzer's result, which
// safetycheck lists, so the exceptions stay in sight.
//
// What it cannot see: reads that are unbounded without these functions
// (io.Copy or bufio into a bytes.Buffer, (*bytes.Buffer).ReadFrom,
// json.NewDecoder on a body), clients another library builds (client-go, an
// SDK) or a *http.Client handed in, os.Remove and removals through exec,
// durations computed by strconv and arithmetic, YAML decoded by a library on
// our behalf, (*yaml.Node).Decode of a node parsed elsewhere, and clips
// whose bound is not a constant (see checkClip). It matches calls and types,
// not data flow: it cannot tell a user path from a path we created, nor input
// from our own embedded files (an allow's reason says which).
package safety

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// Analyzer reports the patterns above outside their sanctioned packages.
// Its result is the []Allowed of the package.
var Analyzer = &analysis.Analyzer{
	Name:       "safety",
	Doc:        "report unbounded reads, unsanctioned HTTP clients, removes and renames, duration parsing, YAML decoding and hand-clipped messages outside the one package that owns each",
	Run:        run,
	ResultType: reflect.TypeFor[[]Allowed](),
}

// Allowed is one finding kept by a //safety:allow comment.
type Allowed struct {
	Pos     token.Position // the finding
	Pattern string
	Reason  string
}

// finding is a pattern found at pos, before allows are applied.
type finding struct {
	pos  token.Pos
	r    *rule
	what string
}

func run(pass *analysis.Pass) (any, error) {
	var found []finding
	report := func(pos token.Pos, r *rule, what string) {
		if !r.sanctionedIn(pass.Pkg.Path()) {
			found = append(found, finding{pos, r, what})
		}
	}
	var files []*ast.File
	for _, f := range pass.Files {
		if strings.HasSuffix(pass.Fset.File(f.Pos()).Name(), "_test.go") {
			continue
		}
		files = append(files, f)
		checkUses(pass, f, report)
		checkClip(pass, f, report)
	}
	return applyAllows(pass, files, found), nil
}

// checkUses reports every reference to a banned function or variable and
// every value of an HTTP client type.
func checkUses(pass *analysis.Pass, f *ast.File, report func(token.Pos, *rule, string)) {
	inSelector := map[*ast.Ident]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			inSelector[n.Sel] = true
			if r, name := bannedObject(pass.TypesInfo.Uses[n.Sel]); r != nil {
				report(n.Pos(), r, name)
			}
		case *ast.Ident:
			if inSelector[n] {
				break
			}
			if r, name := bannedObject(pass.TypesInfo.Uses[n]); r != nil { // a dot import
				report(n.Pos(), r, name)
			}
		case *ast.ValueSpec: // var c http.Client: a usable zero client
			if n.Type != nil && len(n.Values) == 0 {
				if name := clientType(pass.TypesInfo.TypeOf(n.Type)); name != "" {
					report(n.Type.Pos(), ruleHTTP, "a variable of type "+name)
				}
			}
		case *ast.Field: // a struct field (or parameter) holding one by value
			if name := clientType(pass.TypesInfo.TypeOf(n.Type)); name != "" {
				report(n.Type.Pos(), ruleHTTP, "a field of type "+name)
			}
		case *ast.CompositeLit:
			if name := clientType(pass.TypesInfo.TypeOf(n)); name != "" {
				shown := n
				if n.Type == nil { // an element of a []http.Client{…}
					shown = &ast.CompositeLit{Type: &ast.Ident{Name: name}, Elts: n.Elts}
				}
				report(n.Pos(), ruleHTTP, types.ExprString(shown))
			}
		case *ast.CallExpr:
			if b, ok := pass.TypesInfo.Uses[calleeIdent(n.Fun)].(*types.Builtin); ok && b.Name() == "new" && len(n.Args) == 1 {
				if name := clientType(pass.TypesInfo.TypeOf(n.Args[0])); name != "" {
					report(n.Pos(), ruleHTTP, types.ExprString(n))
				}
			}
		}
		return true
	})
}

// bannedObject is the rule a package-level function or variable breaks, and
// its qualified name.
func bannedObject(obj types.Object) (*rule, string) {
	if obj == nil || obj.Pkg() == nil || obj.Parent() != obj.Pkg().Scope() {
		return nil, "" // not package-level: a method, a field, a local
	}
	r := banned[obj.Pkg().Path()][obj.Name()]
	if r == nil {
		return nil, ""
	}
	return r, obj.Pkg().Name() + "." + obj.Name()
}

// clientType names t if it is net/http's Client or Transport itself (a
// pointer to one is only a reference to a client made elsewhere).
func clientType(t types.Type) string {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != "net/http" || !clientTypes[n.Obj().Name()] {
		return ""
	}
	return "http." + n.Obj().Name()
}

// calleeIdent is the identifier a call's function expression names, if any.
func calleeIdent(fun ast.Expr) *ast.Ident {
	switch f := ast.Unparen(fun).(type) {
	case *ast.Ident:
		return f
	case *ast.SelectorExpr:
		return f.Sel
	}
	return nil
}

func message(f finding) string {
	return fmt.Sprintf("%s %s: use %s", f.what, f.r.why, f.r.use)
}
