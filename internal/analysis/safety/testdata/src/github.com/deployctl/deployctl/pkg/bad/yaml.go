package bad

import (
	"bytes"

	yamlv2 "gopkg.in/yaml.v2"
	"gopkg.in/yaml.v3"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	k8syaml "sigs.k8s.io/yaml"
)

func decodes(data []byte, n *yaml.Node) {
	var v any
	_ = yaml.Unmarshal(data, &v)                                   // want `yaml.Unmarshal decodes YAML without the alias-expansion bound: use internal/safeyaml`
	_ = yaml.NewDecoder(bytes.NewReader(data)).Decode(&v)          // want `yaml.NewDecoder decodes YAML`
	_ = yamlv2.UnmarshalStrict(data, &v)                           // want `yaml.UnmarshalStrict decodes YAML`
	_ = yamlv2.Unmarshal(data, &v)                                 // want `yaml.Unmarshal decodes YAML`
	_ = k8syaml.UnmarshalStrict(data, &v)                          // want `yaml.UnmarshalStrict decodes YAML`
	_, _ = k8syaml.YAMLToJSON(data)                                // want `yaml.YAMLToJSON decodes YAML`
	_ = utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096) // want `yaml.NewYAMLOrJSONDecoder decodes YAML`

	// Not the pattern: encoding, and decoding a node already parsed.
	_, _ = yaml.Marshal(v)
	_, _ = k8syaml.Marshal(v)
	_ = n.Decode(&v)
}
