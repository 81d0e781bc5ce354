package spec

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// maxYAMLDepth is yaml.v3's nesting limit (flow levels and indentation
// levels): past it the parser gives up.
const maxYAMLDepth = 10000

// badByte finds the first byte YAML refuses — invalid UTF-8, or a control
// character outside tab, line feed and carriage return (YAML 1.2 c-printable,
// the rule yaml.v3's reader applies) — and locates it by line and column,
// which yaml.v3's own reader error does not. UTF-16 input (with its byte
// order mark) is left to the YAML reader.
func badByte(file string, data []byte) (FieldError, bool) {
	if bytes.HasPrefix(data, []byte("\xff\xfe")) || bytes.HasPrefix(data, []byte("\xfe\xff")) {
		return FieldError{}, false
	}
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		at := func(format string, args ...any) (FieldError, bool) {
			return FieldError{File: file, Line: line, Col: col, Msg: "invalid YAML: " + fmt.Sprintf(format, args...)}, true
		}
		switch {
		case r == utf8.RuneError && size <= 1:
			return at("invalid UTF-8 (byte 0x%02x): a spec must be UTF-8 text", data[i])
		case r == '\n':
			line, col = line+1, 1
			i += size
			continue
		case r == 0:
			return at("NUL byte (U+0000) is not allowed")
		case !printable(r):
			return at("control character %U is not allowed", r)
		}
		i += size
		col++
	}
	return FieldError{}, false
}

// printable is YAML 1.2's c-printable plus line breaks (yaml.v3 reader).
func printable(r rune) bool {
	return r == '\t' || r == '\r' || (r >= 0x20 && r <= 0x7e) || r == 0x85 ||
		(r >= 0xa0 && r <= 0xd7ff) || (r >= 0xe000 && r <= 0xfffd) || (r >= 0x10000 && r <= 0x10ffff)
}

// tooDeep locates where nesting first passes limit: a flow collection
// ([ or {) opened past the limit, or a block indentation (spaces and
// "- " / "? " / ": " indicators) deeper than limit columns. Quoted text and
// comments are skipped. It returns 0, 0 if it finds no such place.
func tooDeep(data []byte, limit int) (line, col int) {
	line, col = 1, 0
	depth := 0
	var quote byte
	indent := true // only indentation and indicators so far on this line
	prev := byte('\n')
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == '\n' {
			line, col, indent, prev = line+1, 0, true, c
			continue
		}
		col++
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '#' && (prev == ' ' || prev == '\n' || prev == '\t'):
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case (c == '"' || c == '\'') && bytes.IndexByte([]byte(" \t\n[{,:-?"), prev) >= 0:
			quote = c
		case c == '[' || c == '{':
			if depth++; depth > limit {
				return line, col
			}
		case c == ']' || c == '}':
			depth = max(0, depth-1)
		}
		if indent && bytes.IndexByte([]byte(" \t-?:"), c) < 0 {
			indent = false
		}
		if indent && col > limit {
			return line, col
		}
		prev = c
	}
	return 0, 0
}
