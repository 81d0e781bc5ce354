//go:build tools

// Package tools pins the programs of the bootstrap e2e path (issue 26) that
// are built on Kubernetes libraries v0.37: Helm (the bootstrap's real helm)
// and a NATS server (the image of Argo Events' JetStream EventBus).
// build-boot.sh builds them.
package tools

import (
	_ "github.com/nats-io/nats-server/v2"
	_ "helm.sh/helm/v3/cmd/helm"
)
