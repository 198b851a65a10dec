# fluss-gateway-go developer commands. See README.md.
SHELL := /bin/bash
GO ?= go
CLUSTER := deployments/local/fluss-cluster.sh
GATEWAY_CONFIG ?= configs/local.yaml
GOLANGCI_VERSION ?= v2.15.0

.PHONY: check fmt-check tidy-check image test-deploy test-otel test-faults load all build run cluster-up cluster-down cluster-status test test-unit test-integration gen lint fuzz bench clean bench-native fuzz-campaign test-backpressure bench-resources bench-resources-short soak bench-scan

all: build

build:
	$(GO) build -o bin/fluss-gateway ./bootstrap/cmd/gateway

## run: start the local Fluss cluster and the gateway on 127.0.0.1:8080 (cluster id `default`);
## with FLUSS_GATEWAY_CONFIG set, only the gateway, with that configuration
run: build
	@if [ -n "$$FLUSS_GATEWAY_CONFIG" ]; then exec ./bin/fluss-gateway; fi; \
	out=$$(bash $(CLUSTER) start) || exit 1; \
	boot=$$(printf '%s\n' "$$out" | sed -n 's/^FLUSS_BOOTSTRAP=//p'); \
	echo "local Fluss cluster at $$boot (stop it with: make cluster-down)"; \
	FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS=$$boot exec ./bin/fluss-gateway --config $(GATEWAY_CONFIG)

cluster-up:
	bash $(CLUSTER) start

cluster-down:
	bash $(CLUSTER) stop

cluster-status:
	bash $(CLUSTER) status

## test: unit tests, then integration tests against a real local Fluss cluster that it starts and stops itself
test:
	bash tests/run.sh

test-unit:
	$(GO) test -count=1 ./...

## test-integration: integration tests only, against an already running cluster (make cluster-up)
test-integration:
	bash tests/run.sh --integration-only --keep-cluster

## test-otel: gateway telemetry into a real OpenTelemetry Collector (built from the Go module proxy)
test-otel:
	bash tests/otel/run.sh

## test-faults: SIGKILL/restart tablet servers of a 3-server cluster under sustained writes
test-faults:
	bash tests/faults/run.sh

## test-backpressure: cooperative KV backpressure on a real Fluss 1.0 tablet server (1.0-SNAPSHOT jars)
test-backpressure:
	bash tests/faults/backpressure.sh

## load: a bounded load run on loopback at 2x the sustainable rate
load:
	bash tests/load/run.sh

## bench-resources: peak RSS, descriptors, rows/s and 429s of the gateway under the issue-21 load
## points (tests/resources/run.sh; bench-resources-short is the CI form, < 2 min, with the hard limits)
bench-resources:
	bash tests/resources/run.sh

bench-resources-short:
	bash tests/resources/run.sh --short

## soak: writes, lookups and DDL at half of the calibrated peak for SOAK_DURATION (1h), with the
## gateway's RSS, fds, goroutines and p99 per interval (tests/soak/run.sh; flat is the target)
soak:
	bash tests/soak/run.sh

## bench-native: the gateway and the official Java client writing the same rows side by side
## (tests/bench-native/run.sh; BENCH_SWEEP=1 for the entries x concurrency sweep)
bench-native:
	bash tests/bench-native/run.sh

## bench-scan: the gateway's scan cursor chain and the Java client's LogScanner reading the same
## 500,000-row log table side by side (tests/bench-native/scan.sh; SCAN_CHAINS=4 for four chains)
bench-scan:
	bash tests/bench-native/scan.sh

gen:
	bash adapters/fluss/proto/gen.sh

## lint: go vet and golangci-lint (with the depguard layer rules of .golangci.yml); the
## pinned golangci-lint is built once per machine into $(TOOLS_CACHE) (outside the clone,
## like the collector and the deploy tools, so fresh clones on one machine share it)
TOOLS_CACHE ?= $(HOME)/.cache/fluss-gateway-go/bin
GOLANGCI := $(TOOLS_CACHE)/golangci-lint-$(GOLANGCI_VERSION)

$(GOLANGCI):
	@mkdir -p $(TOOLS_CACHE)/install
	GOBIN=$(TOOLS_CACHE)/install $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)
	mv $(TOOLS_CACHE)/install/golangci-lint $@

lint: $(GOLANGCI)
	$(GO) vet ./...
	$(GOLANGCI) run ./...

## fmt-check: fail when a Go file of this module is not gofmt-formatted (nested modules,
## such as the generated collector under tools/otelcol/src, are skipped)
fmt-check:
	@nested=$$(git ls-files '*/go.mod' | sed -n 's|/go.mod$$|/|p'); \
	files=$$(git ls-files --cached --others --exclude-standard '*.go' | { if [ -n "$$nested" ]; then grep -v -F "$$nested"; else cat; fi; }); \
	out=$$(gofmt -l $$files); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## tidy-check: fail when go.mod/go.sum differ from what `go mod tidy` writes
tidy-check:
	$(GO) mod tidy -diff

## check: formatting, vet, lint, tidiness and the unit tests with -race; needs no Java
check: fmt-check tidy-check lint
	$(GO) test -count=1 -race ./...

fuzz:
	bash tests/fuzz.sh

# Extended campaign (not in CI): every target with one worker, at least 10^7
# executions in total.
fuzz-campaign:
	FUZZTIME=$${FUZZTIME:-35s} FUZZPARALLEL=1 FUZZ_MIN_EXECS=10000000 bash tests/fuzz.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./adapters/...

## image: OCI image archive bin/fluss-gateway-<version>.tar from the static binary, no container engine (tools/image)
image:
	bash tools/image/build.sh

## test-deploy: Helm chart lint/render/kubeconform, rendered configs accepted by the gateway, systemd unit,
## reproducible image, image smoke test, dashboard metrics and /docs in headless Chromium (tests/deploy)
test-deploy:
	bash tests/deploy/test-deploy.sh

clean:
	rm -rf bin
