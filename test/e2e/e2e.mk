# The e2e harness (issue 5). Included from the top Makefile:
#   include test/e2e/e2e.mk
# Needs root (it creates a dummy interface, runs containerd and a kubelet).
#   make e2e-tools   build (or reuse the cached) cluster binaries from the Go module proxy
#   make e2e-up      start the cluster: k8s v1.32, CoreDNS, Argo Workflows, Argo CD, git daemon
#   make e2e-smoke   a trivial workflow with our step image against Argo CD
#   make e2e-reload  rebuild the step image from ./cmd/deploystep into the running cluster
#   make e2e-down    stop everything and check nothing is left on the host
#   make e2e         up, the issue-5 scenario, down (always), summary table
#   make image       the product's images as OCI tarballs: dist/deployctl.tar, dist/deploystep.tar

E2E_DIR := test/e2e

.PHONY: e2e-tools e2e-up e2e-down e2e-smoke e2e-reload e2e image

e2e-tools:
	@$(E2E_DIR)/build-tools.sh >/dev/null

e2e-up:
	@$(E2E_DIR)/up.sh

e2e-down:
	@$(E2E_DIR)/down.sh

e2e-smoke:
	@$(E2E_DIR)/smoke.sh

e2e-reload:
	@$(E2E_DIR)/images.sh reload

e2e:
	@$(E2E_DIR)/run.sh

image:
	@$(E2E_DIR)/images.sh product dist
