//go:build tools

// Package tools pins the controllers of the bootstrap e2e path (issue 26)
// built on Kubernetes libraries v0.32: Argo Events (one multi-call binary:
// controller, eventsource, sensor, webhook) and the Sealed Secrets
// controller. build-boot.sh builds them.
package tools

import (
	_ "github.com/argoproj/argo-events/cmd"
	_ "github.com/bitnami-labs/sealed-secrets/cmd/controller"
)
