# fluss-gateway-go developer commands. See README.md.
SHELL := /bin/bash
GO ?= go
CLUSTER := deployments/local/fluss-cluster.sh
GATEWAY_CONFIG ?= configs/local.yaml
GOLANGCI_VERSION ?= v2.15.0

.PHONY: test-otel test-faults test-backpressure load all build run cluster-up cluster-down cluster-status test test-unit test-integration gen lint fuzz bench clean

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

gen:
	bash adapters/fluss/proto/gen.sh

lint:
	$(GO) vet ./...
	$(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION) run ./...

fuzz:
	bash tests/fuzz.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./adapters/...

clean:
	rm -rf bin
