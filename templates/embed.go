// Package templates embeds the hand-written sources the compiler starts
// from: the Argo CD health Lua and the Ansible bootstrap skeleton (the
// step templates are rendered from pkg/stepcontract). Everything under this folder ships in
// the deployctl binary.
package templates

import "embed"

// FS holds every file of this folder.
//
//go:embed *
var FS embed.FS
