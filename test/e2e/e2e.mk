# The e2e harness (issue 5). Included from the top Makefile:
#   include test/e2e/e2e.mk
# Needs root (it creates a dummy interface, runs containerd and a kubelet).
#   make e2e-tools   build (or reuse the cached) cluster binaries of every version set
#   make e2e-validate every example's generated tree through Argo Workflows v4's validator
#   make e2e-up      start the cluster: k8s v1.32, CoreDNS, Argo Workflows, Argo CD, git daemon
#                    (E2E_VERSIONS=oldest|newest picks the Argo versions; default newest)
#   make e2e-smoke   a trivial workflow with our step image against Argo CD
#   make e2e-reload  rebuild the step image from ./cmd/deploystep into the running cluster
#   make e2e-down    stop everything and check nothing is left on the host
#   make e2e         per version set: up, the issue-5 scenario, down (always), summary table
#   make image       the product's images as OCI tarballs: dist/deployctl.tar, dist/deploystep.tar
#   make e2e-scale N=100,300  the synthetic platform of N apps, plugin and pod mode, measured (issue 24; not in CI)
#   make e2e-boot    opt-in, not in `make e2e` (issue 26): up an EMPTY cluster (newest set), the
#                    generated bootstrap through test/e2e/boot.sh, down (always)

E2E_DIR := test/e2e

.PHONY: e2e-tools e2e-validate e2e-up e2e-down e2e-smoke e2e-reload e2e image e2e-boot

e2e-tools:
	@$(E2E_DIR)/build-tools.sh all >/dev/null

# v3.7.18's validator runs in `make test` (pkg/generate); v4's lives in the
# e2e's tools module tools/awf, as cmd/awfvalidate. Argo CD v3.6's
# create-time validation (tools/argocd-v3.6, cmd/argocdvalidate) judges the
# import's fixtures and variants beside its CRD (pkg/importer/receiver). It
# is built here, with build-tools.sh's flags and Go cache, after that module's
# argocd (whose packages it shares): seconds, and build-tools.sh, part of
# every tools module's cache key, stays as it is.
E2E_ACD_DIR := $(E2E_DIR)/tools/argocd-v3.6
e2e-validate: build
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	for f in $(EXAMPLES); do \
	  $(BIN)/deployctl generate $$f -o $$tmp/$$(basename $$f .yaml) >/dev/null || exit 1; \
	done; \
	bin=$$(E2E_VERSIONS=newest $(E2E_DIR)/build-tools.sh | tail -1) && $$bin/awfvalidate $$tmp/* && \
	(cd $(E2E_ACD_DIR) && env GOTOOLCHAIN=$$(awk '$$1 == "toolchain" {print $$2}' go.mod) CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" \
	  $${E2E_GOCACHE:+GOCACHE=$$E2E_GOCACHE} nice -n 10 go build -trimpath -ldflags "-s -w" -o $$tmp/argocdvalidate ./cmd/argocdvalidate) && \
	DEPLOYCTL_ARGOCDVALIDATE=$$tmp/argocdvalidate go test -count=1 -run 'AgreeWithArgoCD|ArgoCDGoValidation' ./pkg/importer/receiver/

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

# ---- where it stops scaling (issue 24): not part of `make e2e` or CI.
# N is a comma list of platform sizes; MODES, DEPTH, FANIN, PARALLELISM and
# KIND (configmap|pod) tune the synthetic platform (test/e2e/scale.sh);
# INLINE=1 submits the template's spec inline (what Argo then stores once).
.PHONY: e2e-scale
e2e-scale:
	@N="$(N)" MODES="$(MODES)" INLINE="$(INLINE)" DEPTH="$(DEPTH)" FANIN="$(FANIN)" PARALLELISM="$(PARALLELISM)" KIND="$(KIND)" $(E2E_DIR)/scale.sh

# The bootstrap path (issue 26): the chart builder's unit test, Argo Events'
# own validation and filters on the generated events/ (eventscheck), then up
# an empty cluster, boot.sh, down whatever happened.
e2e-boot: build
	@cd $(E2E_DIR)/tools/boot && nice -n 10 go test -count=1 ./cmd/mkcharts
	@cd $(E2E_DIR)/tools/boot-events && GOFLAGS=-mod=readonly nice -n 10 go test -count=1 ./eventscheck
	@export E2E_VERSIONS=newest E2E_EMPTY=1; rc=0; $(E2E_DIR)/up.sh && $(E2E_DIR)/boot.sh || rc=$$?; \
	  $(E2E_DIR)/down.sh || rc=$$((rc ? rc : 1)); exit $$rc
