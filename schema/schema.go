// Package schema publishes the JSON Schema (2020-12) of the platform spec.
// Editors use it through a yaml-language-server modeline; the loader
// validates every spec against it before anything else.
package schema

import _ "embed"

// PlatformJSON is schema/platform.schema.json.
//
//go:embed platform.schema.json
var PlatformJSON []byte

// ID is the schema's $id, the name the loader compiles it under.
const ID = "https://deployctl.dev/schema/platform.schema.json"
