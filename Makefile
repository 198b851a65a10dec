# fluss-gateway-go developer commands. See README.md.
SHELL := /bin/bash
GO ?= go
CLUSTER := deployments/local/fluss-cluster.sh
GATEWAY_CONFIG ?= configs/local.yaml
GOLANGCI_VERSION ?= v2.6.2

.PHONY: test-otel test-faults load all build run cluster-up cluster-down cluster-status test test-unit test-integration gen lint fuzz bench clean

all: build

build:
	$(GO) build -o bin/fluss-gateway ./bootstrap/cmd/gateway

## run: start the local Fluss cluster (unless FLUSS_GATEWAY_CONFIG points elsewhere) and the gateway on 127.0.0.1:8080
run: build
	@if [ -z "$$FLUSS_GATEWAY_CONFIG" ]; then bash $(CLUSTER) start; fi
	./bin/fluss-gateway --config $${FLUSS_GATEWAY_CONFIG:-$(GATEWAY_CONFIG)}

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
