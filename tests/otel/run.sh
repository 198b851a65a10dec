#!/usr/bin/env bash
# Runs the telemetry tests (build tag `otel`): builds the OpenTelemetry
# Collector if needed (tools/otelcol/build.sh, cached in .cache/otelcol), then
# runs tests/otel against it. This is `make test-otel`.
#
#   bash tests/otel/run.sh             # memory backend, or the local Fluss cluster if it runs
#   bash tests/otel/run.sh --strict    # fail every check that cannot run (default with a cluster)
#   bash tests/otel/run.sh -run TestX  # extra arguments go to `go test`
#
# The local Fluss cluster (deployments/local/fluss-cluster.sh) is used when it
# is running or FLUSS_BOOTSTRAP is set; this script never starts it.
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-go}

args=()
for arg in "$@"; do
	case $arg in
	--strict) export OTEL_TEST_STRICT=1 ;;
	*) args+=("$arg") ;;
	esac
done

echo "==> OpenTelemetry Collector"
OTELCOL_BIN=$(bash tools/otelcol/build.sh)
export OTELCOL_BIN OTEL_TEST_REQUIRED=1

if [[ -z ${FLUSS_BOOTSTRAP:-} ]]; then
	if out=$(bash deployments/local/fluss-cluster.sh status 2>/dev/null); then
		FLUSS_BOOTSTRAP=$(sed -n 's/^FLUSS_BOOTSTRAP=//p' <<<"$out")
		[[ -n $FLUSS_BOOTSTRAP ]] && export FLUSS_BOOTSTRAP
	fi
fi
# Against a real cluster every check must pass (the wiring is complete); with
# the memory backend the checks that need Fluss (backend spans and write
# metrics) are skipped with their reason.
if [[ -n ${FLUSS_BOOTSTRAP:-} ]]; then
	export OTEL_TEST_STRICT=1
fi
echo "==> telemetry tests (backend: ${FLUSS_BOOTSTRAP:-memory})"
$GO test -tags otel -count=1 -v -timeout 10m ./tests/otel/... ${args[@]+"${args[@]}"}
