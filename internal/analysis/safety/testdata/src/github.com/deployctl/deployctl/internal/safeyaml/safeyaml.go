// Package safeyaml owns YAML decoding.
package safeyaml

import "gopkg.in/yaml.v3"

func Decode(data []byte, v any) error { return yaml.Unmarshal(data, v) }
