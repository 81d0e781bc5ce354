package safety

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/tools/go/analysis"
)

// clipAtLeast is the constant bound from which any cut of a string is taken
// for a clip, whatever the string is called: shorter constant cuts are
// parsing (a digest's first 16 hex digits, a fixed prefix).
const clipAtLeast = 64

// checkClip reports hand-written clipping of a message: the class behind
// `import --live` printing 38 of a token's 40 characters, a body cut at 300
// bytes before masking. A finding is
//
//   - a slice expression x[:hi] or x[lo:hi] on a string or []byte whose high
//     bound is a constant (a constant, or min(…) with a constant argument)
//     and whose operand is message-like, whatever the bound; or on a string
//     with a constant bound of at least clipAtLeast, whatever its name;
//   - a printf-style format (a constant passed to a parameter named format)
//     with a precision on %s or %q, such as "%.300s".
//
// Message-like: a call of an Error() method or of fmt.Sprint*; a name
// (variable, field, function or method called) with a word from
// messageWords, split at camel case and underscores (errMsg, respBody,
// stderr); a conversion, a strings or bytes function, an index, a slice or a
// concatenation of something message-like.
//
// It cannot catch: bounds held in variables or parameters (a Clip(s, n) of
// one's own, a limit in a package-level var), cuts written as a loop, with a
// strings.Builder or through io.LimitReader, and a constant cut under
// clipAtLeast of a string whose name says nothing (x[:40]).
func checkClip(pass *analysis.Pass, f *ast.File, report func(token.Pos, *rule, string)) {
	info := pass.TypesInfo
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SliceExpr:
			if n.High == nil {
				return true
			}
			bound, ok := constBound(info, n.High)
			if !ok {
				return true
			}
			str, text := textType(info.TypeOf(n.X))
			if !text {
				return true
			}
			if messageLike(info, n.X) || (str && bound >= clipAtLeast) {
				report(n.Pos(), ruleClip, types.ExprString(n))
			}
		case *ast.CallExpr:
			if pos, ok := precisionFormat(info, n); ok {
				report(pos, ruleClip, "a precision on a string verb")
			}
		}
		return true
	})
}

// constBound is a slice bound's constant value: the bound itself, or the
// least constant argument of min.
func constBound(info *types.Info, e ast.Expr) (int64, bool) {
	if tv := info.Types[e]; tv.Value != nil {
		return constant.Int64Val(constant.ToInt(tv.Value))
	}
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return 0, false
	}
	if b, ok := info.Uses[calleeIdent(call.Fun)].(*types.Builtin); !ok || b.Name() != "min" {
		return 0, false
	}
	least, found := int64(0), false
	for _, a := range call.Args {
		if v, ok := constBound(info, a); ok && (!found || v < least) {
			least, found = v, true
		}
	}
	return least, found
}

// textType reports whether t is a string (str) or a string or []byte (text).
func textType(t types.Type) (str, text bool) {
	if t == nil {
		return false, false
	}
	switch u := types.Unalias(t).Underlying().(type) {
	case *types.Basic:
		s := u.Info()&types.IsString != 0
		return s, s
	case *types.Slice:
		b, ok := types.Unalias(u.Elem()).(*types.Basic)
		return false, ok && (b.Kind() == types.Byte || b.Kind() == types.Uint8)
	}
	return false, false
}

// messageLike reports whether e is, by its name or origin, a message, an
// error's text or an answer's body.
func messageLike(info *types.Info, e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return messageName(e.Name)
	case *ast.SelectorExpr:
		return messageName(e.Sel.Name)
	case *ast.IndexExpr:
		return messageLike(info, e.X)
	case *ast.SliceExpr:
		return messageLike(info, e.X)
	case *ast.BinaryExpr:
		return e.Op == token.ADD && (messageLike(info, e.X) || messageLike(info, e.Y))
	case *ast.CallExpr:
		if info.Types[e.Fun].IsType() { // a conversion: string(body)
			return len(e.Args) == 1 && messageLike(info, e.Args[0])
		}
		fn, ok := info.Uses[calleeIdent(e.Fun)].(*types.Func)
		if !ok {
			return false
		}
		sig := fn.Signature()
		switch {
		case fn.Name() == "Error" && sig.Recv() != nil && sig.Params().Len() == 0:
			return true
		case fn.Pkg() != nil && fn.Pkg().Path() == "fmt" && strings.HasPrefix(fn.Name(), "Sprint"):
			return true
		case fn.Pkg() != nil && (fn.Pkg().Path() == "strings" || fn.Pkg().Path() == "bytes") && sig.Recv() == nil:
			return len(e.Args) > 0 && messageLike(info, e.Args[0])
		}
		return messageName(fn.Name())
	}
	return false
}

// messageWords are the words that make a name a message's.
var messageWords = map[string]bool{
	"msg": true, "msgs": true, "message": true, "messages": true,
	"err": true, "errs": true, "error": true, "errors": true,
	"body": true, "text": true, "detail": true, "details": true, "reason": true,
	"stderr": true, "stdout": true, "output": true, "payload": true,
	"resp": true, "response": true, "answer": true, "log": true,
}

// messageName reports whether a word of name, split at camel case and
// underscores, is in messageWords.
func messageName(name string) bool {
	for _, w := range words(name) {
		if messageWords[w] {
			return true
		}
	}
	return false
}

// words splits an identifier at underscores and camel case, lower-cased:
// "respBody" → resp, body; "HTTPError" → http, error.
func words(name string) []string {
	var out []string
	rs := []rune(name)
	start := 0
	for i := 1; i <= len(rs); i++ {
		cut := i == len(rs) || rs[i] == '_' ||
			(unicode.IsUpper(rs[i]) && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))))
		if !cut {
			continue
		}
		if w := strings.Trim(string(rs[start:i]), "_"); w != "" {
			out = append(out, strings.ToLower(w))
		}
		start = i
	}
	return out
}

// precisionVerb is a string verb with a precision: %.300s, %-10.80q.
var precisionVerb = regexp.MustCompile(`%[-+# 0]*[0-9]*\.[0-9]+[sq]`)

// precisionFormat finds a constant format with a precision on a string verb
// passed to a parameter named format.
func precisionFormat(info *types.Info, call *ast.CallExpr) (token.Pos, bool) {
	sig, ok := types.Unalias(info.TypeOf(call.Fun)).(*types.Signature)
	if !ok {
		return token.NoPos, false
	}
	params := sig.Params()
	for i := 0; i < params.Len() && i < len(call.Args); i++ {
		if params.At(i).Name() != "format" {
			continue
		}
		tv := info.Types[call.Args[i]]
		if tv.Value == nil || tv.Value.Kind() != constant.String {
			return token.NoPos, false
		}
		format := strings.ReplaceAll(constant.StringVal(tv.Value), "%%", "")
		return call.Args[i].Pos(), precisionVerb.MatchString(format)
	}
	return token.NoPos, false
}
