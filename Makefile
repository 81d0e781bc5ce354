# deployctl — build, test and regenerate. Everything a fresh machine needs is
# installed by these targets (Go modules through the proxy, Debian packages
# with apt); nothing is assumed installed by hand.

GO       ?= go
BIN      := bin
EXAMPLES := $(wildcard examples/*.yaml)
PLATFORMS := $(basename $(notdir $(EXAMPLES)))
FUZZTIME ?= 30s
# Go minimizes each new input for up to 60 s by default, counted inside
# FUZZTIME and running no new input meanwhile: CI's 30 s runs of FuzzLoad,
# FuzzImport and FuzzParse spent almost all of it minimizing (57, 268 and
# 17 execs). 2 s each leaves the rest to fuzzing.
FUZZMINTIME ?= 2s

.PHONY: all build demo generate verify safety test unit fuzz bench bench-import bench-plugin bench-plugin-hostile bench-plugin-lookups vet fmt ci-deps clean

all: build

## build: the two binaries: deployctl (compiler + executor) and deploystep (in-step)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/deployctl ./cmd/deployctl
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(BIN)/deploystep ./cmd/deploystep

## demo: the main job on the bundled example: lint, plan, generate
demo: build
	$(BIN)/deployctl lint examples/reference-platform.yaml
	$(BIN)/deployctl plan examples/reference-platform.yaml
	$(BIN)/deployctl generate examples/reference-platform.yaml -o generated/reference-platform

## generate: regenerate generated/<platform> for every example (commit the result)
generate: build
	@for f in $(EXAMPLES); do \
	  p=$$(basename $$f .yaml); \
	  $(BIN)/deployctl generate $$f -o generated/$$p || exit 1; \
	done

## verify: generated/ is exactly what the current code makes; code is formatted, vetted and passes the safety guard
verify: build vet fmt safety
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	for f in $(EXAMPLES); do \
	  p=$$(basename $$f .yaml); \
	  $(BIN)/deployctl generate $$f -o $$tmp/$$p >/dev/null || exit 1; \
	done; \
	if ! diff -r generated $$tmp >/dev/null; then \
	  diff -r generated $$tmp | head -40; \
	  echo "generated/ is stale: run 'make generate' and commit the result"; exit 1; \
	fi; \
	echo "generated/ is up to date ($(PLATFORMS))"

## test: unit tests, Argo's validator on every generated manifest, the fuzz smoke run
test: ci-deps unit fuzz

unit:
	$(GO) test ./...

## fuzz: the spec loader, the import, its reader, the --manifests reader and the plugin's request decoding under go test -fuzz, each for FUZZTIME (no panic on any input)
fuzz:
	$(GO) test ./pkg/spec -run '^$$' -fuzz FuzzLoad -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME)
	$(GO) test ./pkg/importer -run '^$$' -fuzz FuzzImport -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME)
	$(GO) test ./pkg/importer/appread -run '^$$' -fuzz FuzzRead -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME)
	$(GO) test ./pkg/step/plugin -run '^$$' -fuzz FuzzParseRequest -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME)
	$(GO) test ./pkg/resdeps -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME)

## bench: load/validate/plan, generate and graph benchmarks
bench:
	$(GO) test ./pkg/plan ./pkg/generate ./pkg/graph -run '^$$' -bench . -benchmem

## bench-import: peak RSS of `deployctl import` on 1,000 and 10,000 Applications, against the input (rss/input)
bench-import:
	$(GO) test ./pkg/importer -run '^$$' -bench BenchmarkImportRSS -benchtime 1x

## bench-plugin: `deploystep serve` with 500 concurrent sync-and-wait nodes against fake Argo CDs: heap, RSS, goroutines, CPU per node
bench-plugin:
	$(GO) test ./pkg/step -run '^$$' -bench BenchmarkServe500 -benchtime 1x

## bench-plugin-hostile: `deploystep serve` under issue 22's hostile requests at once: peak heap and RSS against the sidecar's 320 MiB
bench-plugin-hostile:
	$(GO) test ./pkg/step -run '^$$' -bench BenchmarkServeHostile -benchtime 1x

## bench-plugin-lookups: 200 plugin lookups at once against a 1,000-app compressed Workflow: Workflow GETs, peak heap, allocations (issue 24)
bench-plugin-lookups:
	$(GO) test ./pkg/step/plugin -run '^$$' -bench BenchmarkLookups200Of1000 -benchtime 3x

vet:
	$(GO) vet ./...

## safety: unbounded reads, HTTP clients, removes and renames, duration parsing, YAML decoding and hand-clipped
## messages outside the one package that owns each (internal/analysis/safety; README, "The safety guard")
safety:
	$(GO) run ./internal/cmd/safetycheck ./...

fmt:
	@out=$$(gofmt -l cmd pkg internal schema templates); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## ci-deps: Debian packages the tests use (ansible-playbook, ansible-lint)
ci-deps:
	@command -v ansible-playbook >/dev/null && command -v ansible-lint >/dev/null || { \
	  echo "installing ansible and ansible-lint (apt)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ansible ansible-lint >/dev/null; }

clean:
	rm -rf $(BIN) dist

-include test/e2e/e2e.mk
