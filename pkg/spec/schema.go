package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/deployctl/deployctl/internal/duration"
	"github.com/deployctl/deployctl/schema"
)

var (
	compiled     *jsonschema.Schema
	compiledErr  error
	compiledOnce sync.Once
)

// platformSchema compiles the embedded JSON Schema once.
func platformSchema() (*jsonschema.Schema, error) {
	compiledOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		// go-duration: a Go duration that fits time.Duration (the pattern
		// admits 9999999999999h, which overflows). Only pattern-valid
		// strings are judged here, so a typo gets one message, not two.
		c.AssertFormat = true
		c.Formats["go-duration"] = func(v any) bool {
			s, ok := v.(string)
			if !ok || !durationRe.MatchString(s) {
				return true
			}
			_, err := duration.Parse(s)
			return err == nil
		}
		if err := c.AddResource(schema.ID, bytes.NewReader(schema.PlatformJSON)); err != nil {
			compiledErr = err
			return
		}
		compiled, compiledErr = c.Compile(schema.ID)
	})
	return compiled, compiledErr
}

// checkSchema validates the document against schema/platform.schema.json
// and turns every leaf violation into a located, readable error.
func (d *Document) checkSchema(value any) error {
	s, err := platformSchema()
	if err != nil {
		return fmt.Errorf("internal: compiling the platform schema: %w", err)
	}
	err = s.Validate(value)
	var ve *jsonschema.ValidationError
	if err == nil {
		return nil
	} else if !errors.As(err, &ve) {
		return err
	}
	var out Errors
	seen := map[string]bool{}
	for _, leaf := range leaves(ve) {
		if kw := leaf.AbsoluteKeywordLocation; !strings.HasSuffix(kw, "/required") && !strings.HasSuffix(kw, "/additionalProperties") {
			d.rejected = append(d.rejected, leaf.InstanceLocation)
		}
		for _, fe := range d.schemaErrors(leaf) {
			if k := fe.Path + "\x00" + fe.Msg; !seen[k] {
				seen[k] = true
				out = append(out, fe)
			}
		}
	}
	return out.OrNil()
}

// leaves returns the violations that have no further cause: the ones that
// say what is actually wrong.
func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

var quoted = regexp.MustCompile(`'((?:[^'\\]|\\.)*)'`)

// schemaErrors rewrites a validator message in the spec's own words.
func (d *Document) schemaErrors(ve *jsonschema.ValidationError) []FieldError {
	path := pointerToPath(ve.InstanceLocation)
	kw := ve.AbsoluteKeywordLocation
	switch {
	case strings.HasSuffix(kw, "/additionalProperties"):
		var out []FieldError
		for _, m := range quoted.FindAllStringSubmatch(ve.Message, -1) {
			f := joinPath(path, m[1])
			d.rejected = append(d.rejected, ve.InstanceLocation+"/"+m[1])
			out = append(out, d.At(f, "unknown field %q%s", m[1], suggestField(m[1])))
		}
		return out
	case strings.HasSuffix(kw, "/required"):
		var out []FieldError
		for _, m := range quoted.FindAllStringSubmatch(ve.Message, -1) {
			out = append(out, d.At(path, "missing required field %q", m[1]))
		}
		return out
	case strings.HasSuffix(kw, "$defs/duration/pattern"):
		return []FieldError{d.At(path, "invalid duration: want a Go duration such as 30s, 5m or 1h30m")}
	case strings.HasSuffix(kw, "$defs/duration/format"):
		return []FieldError{d.At(path, "duration out of range: at most %s for a timeout, %s for a backoff", MaxTimeout, MaxBackoff)}
	case strings.HasSuffix(kw, "$defs/name/pattern"):
		return []FieldError{d.At(path, "not a DNS-1123 label: use lowercase letters, digits and '-', starting and ending with a letter or digit")}
	case strings.HasSuffix(kw, "$defs/name/maxLength"):
		return []FieldError{d.At(path, "name too long: at most 63 characters (it becomes an Argo task and Kubernetes label value)")}
	case strings.HasSuffix(kw, "$defs/chart/properties/version/pattern"):
		return []FieldError{d.At(path, "chart version must be an exact version such as 7.7.0 (no ranges, no latest)")}
	case strings.HasSuffix(kw, "$defs/healthCheck/maxProperties"), strings.HasSuffix(kw, "$defs/healthCheck/minProperties"):
		return []FieldError{d.At(path, "a health check has exactly one of resource or http")}
	}
	return []FieldError{d.At(path, "%s", ve.Message)}
}

// suggestField proposes the closest field name the schema knows, for typos
// such as "dependOn" or "healthcheck".
func suggestField(name string) string {
	if s := closest(name, schemaFieldNames()); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

var (
	fieldNames     []string
	fieldNamesOnce sync.Once
)

// schemaFieldNames lists every property name declared in the schema.
func schemaFieldNames() []string {
	fieldNamesOnce.Do(func() {
		var doc any
		if err := json.Unmarshal(schema.PlatformJSON, &doc); err != nil {
			return
		}
		set := map[string]bool{}
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				if props, ok := v["properties"].(map[string]any); ok {
					for k := range props {
						set[k] = true
					}
				}
				for _, c := range v {
					walk(c)
				}
			case []any:
				for _, c := range v {
					walk(c)
				}
			}
		}
		walk(doc)
		for k := range set {
			fieldNames = append(fieldNames, k)
		}
		sort.Strings(fieldNames)
	})
	return fieldNames
}
