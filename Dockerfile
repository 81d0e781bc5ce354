# syntax=docker/dockerfile:1
#
# The product's two images, from one multi-stage build:
#
#   deploystep  the in-step image: /deploystep only (./cmd/deploystep), run by
#               the ClusterWorkflowTemplates in every workflow pod; kept small.
#   deployctl   the executor (./cmd/deployctl): deploy | validate | teardown |
#               preflight, configured by environment and mounts (/config,
#               /secrets). The default target.
#
#   docker buildx build --platform linux/amd64,linux/arm64 --target deploystep -t REGISTRY/deploystep:TAG .
#   docker buildx build --platform linux/amd64,linux/arm64 --target deployctl  -t REGISTRY/deployctl:TAG .
#
# The binaries are cross-compiled on the build machine's own platform
# (BUILDPLATFORM) for the target's (TARGETOS/TARGETARCH): static
# (CGO_ENABLED=0), no emulation. The final stages are distroless static
# (CA certificates, /etc/passwd with nonroot, /tmp; no shell), running as
# 65532:65532, which is also the uid the generated workflows run pods as.
# Without a registry or Docker daemon, `make image` builds the same two
# images as OCI tarballs (test/e2e/images.sh).

ARG GO_VERSION=1.24
ARG BASE_IMAGE=gcr.io/distroless/static:nonroot

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .

# Build arguments are per stage: each stage that uses them declares them.
FROM build AS build-deploystep
ARG TARGETOS TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags "-s -w" -o /out/deploystep ./cmd/deploystep

FROM build AS build-deployctl
ARG TARGETOS TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags "-s -w" -o /out/deployctl ./cmd/deployctl

FROM ${BASE_IMAGE} AS deploystep
COPY --from=build-deploystep /out/deploystep /deploystep
USER 65532:65532
ENTRYPOINT ["/deploystep"]

FROM ${BASE_IMAGE} AS deployctl
COPY --from=build-deployctl /out/deployctl /usr/local/bin/deployctl
USER 65532:65532
# The executor contract's mounts; the report and metrics go to /tmp unless
# REPORT_DIR (or --report / --metrics-file) says otherwise.
ENV CONFIG_DIR=/config SECRETS_DIR=/secrets
ENTRYPOINT ["/usr/local/bin/deployctl"]
CMD ["--help"]
