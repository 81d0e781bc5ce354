// Package templates embeds the hand-written manifest sources the compiler
// starts from: the reusable ClusterWorkflowTemplates, the Argo CD health Lua
// and the Ansible bootstrap skeleton. Everything under this folder ships in
// the deployctl binary.
package templates

import "embed"

// FS holds every file of this folder.
//
//go:embed *
var FS embed.FS
