package safeyaml

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// bomb is a "billion laughs": each level 10 aliases of the one before, so
// levels levels stand for 10^levels values in a few hundred bytes.
func bomb(levels int) string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func TestAliasBombRefusedBeforeExpansion(t *testing.T) {
	start := time.Now()
	var v map[string]any
	err := Unmarshal([]byte(bomb(9)), &v) // 10^10 values if expanded
	if !IsRefused(err) || !strings.HasPrefix(err.Error(), "yaml: line 4: alias expansion exceeds 10") {
		t.Fatalf("bomb: %v", err)
	}
	if v != nil {
		t.Errorf("decoded despite the refusal: %d keys", len(v))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing took %v", d)
	}
	// The same refusal through the sigs.k8s.io/yaml entry.
	if err := UnmarshalJSON([]byte("ok: 1\n---\n"+bomb(9)), &v); !IsRefused(err) {
		t.Fatalf("UnmarshalJSON, second document: %v", err)
	}
}

func TestRecursiveAlias(t *testing.T) {
	_, err := Node([]byte("a: &x [1, *x]\n"))
	if err == nil || err.Error() != "yaml: line 1: recursive YAML alias: an alias inside its own anchor" {
		t.Fatalf("%v", err)
	}
}

// Ordinary anchors (shared labels, defaults) are kept, and a document
// may double through aliases, or add MinAliasValues.
func TestOrdinaryAliasesPass(t *testing.T) {
	var v struct {
		A map[string]string `json:"a" yaml:"a"`
		B map[string]string `json:"b" yaml:"b"`
	}
	doc := "a: &l {app: web, tier: front}\nb: *l\n"
	if err := Unmarshal([]byte(doc), &v); err != nil || v.B["tier"] != "front" {
		t.Fatalf("v3: %v %v", v, err)
	}
	if err := UnmarshalJSON([]byte(doc), &v); err != nil || v.B["app"] != "web" {
		t.Fatalf("json: %v %v", v, err)
	}
	if _, err := Node([]byte(bomb(2))); err != nil { // about 1,300 values from 3 lines: within MinAliasValues
		t.Fatalf("bomb(2): %v", err)
	}
	if _, err := Node([]byte(bomb(3))); !IsRefused(err) { // about 14,600
		t.Fatalf("bomb(3): %v", err)
	}
}

func TestDecoderDocuments(t *testing.T) {
	d := NewDecoder([]byte("a: 1\n---\nb: 2\n---\n" + bomb(6)))
	for i := 0; i < 2; i++ {
		if _, err := d.Next(); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
	}
	if _, err := d.Next(); !IsRefused(err) || !strings.Contains(err.Error(), "line 8:") {
		t.Fatalf("third: %v", err)
	}
}

// Many small documents, each within a bound of its own, share one: an
// input of 500-byte items adding 10,000 values each would still be a bomb.
func TestBudgetSharedAcrossDocuments(t *testing.T) {
	item := bomb(2) // about 1,300 values from 3 lines
	var doc strings.Builder
	for i := 0; i < 20; i++ {
		doc.WriteString("---\n" + item)
	}
	var refusedAt int
	d := NewDecoder([]byte(doc.String()))
	for i := 0; ; i++ {
		if _, err := d.Next(); err != nil {
			if !IsRefused(err) {
				t.Fatalf("document %d: %v", i, err)
			}
			refusedAt = i
			break
		}
	}
	if refusedAt < 5 || refusedAt > 10 {
		t.Errorf("refused at document %d, want once about 10,000 values were added", refusedAt)
	}
	// Each alone passes, with a budget of its own.
	if _, err := Node([]byte(item)); err != nil {
		t.Fatal(err)
	}
}

func TestLocated(t *testing.T) {
	for _, c := range []struct {
		err  string
		line int
		msg  string
	}{
		{"yaml: line 7: mapping values are not allowed in this context", 7, "mapping values are not allowed in this context"},
		{"yaml: did not find expected node content", 0, "did not find expected node content"},
		{"line 3: alias expansion exceeds 10000 values", 3, "alias expansion exceeds 10000 values"},
	} {
		line, msg := Located(errors.New(c.err))
		if line != c.line || msg != c.msg {
			t.Errorf("Located(%q) = %d, %q; want %d, %q", c.err, line, msg, c.line, c.msg)
		}
	}
}
