#!/usr/bin/env bash
# Runs the whole test suite: unit tests, then the integration tests under tests/
# against a real local Apache Fluss cluster (ZooKeeper, coordinator, tablet
# server from Maven Central jars) that this script starts and stops itself.
#
#   bash tests/run.sh                     # everything (what `make test` and CI run)
#   bash tests/run.sh --integration-only  # skip unit tests
#   bash tests/run.sh --keep-cluster      # reuse a running cluster, leave it running
#
# Environment: FLUSS_VERSION, FLUSS_TABLET_SERVERS (see deployments/local/fluss-cluster.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

unit=1
keep=0
for arg in "$@"; do
  case "$arg" in
    --integration-only) unit=0 ;;
    --keep-cluster) keep=1 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done

GO=${GO:-go}
status=0

if [[ $unit == 1 ]]; then
  echo "==> unit tests"
  $GO vet ./...
  $GO test -count=1 -race ./... || status=1
fi

echo "==> local Fluss cluster"
bash deployments/local/fluss-cluster.sh fetch
started_here=0
if ! bash deployments/local/fluss-cluster.sh status >/dev/null 2>&1; then
  started_here=1
fi
acl_started=0
cleanup() {
  if [[ $acl_started == 1 ]]; then
    echo "==> stopping the ACL Fluss cluster"
    bash tests/integration/acl-cluster.sh stop || true
  fi
  if [[ $keep == 0 && $started_here == 1 ]]; then
    echo "==> stopping local Fluss cluster"
    bash deployments/local/fluss-cluster.sh stop || true
  fi
}
trap cleanup EXIT
out=$(bash deployments/local/fluss-cluster.sh start)
echo "$out"
eval "$(echo "$out" | grep -E '^FLUSS_[A-Z_]+=' | sed 's/^/export /')"
: "${FLUSS_BOOTSTRAP:?cluster script did not print FLUSS_BOOTSTRAP}"

echo "==> second local Fluss cluster with the authorizer (ACL tests)"
acl_started=1
acl_out=$(bash tests/integration/acl-cluster.sh start)
echo "$acl_out"
eval "$(echo "$acl_out" | grep -E '^FLUSS_ACL_[A-Z_]+=' | sed 's/^/export /')"

echo "==> peer client (independent Fluss client used to check our writes)"
bash tests/peer/setup.sh
export FLUSS_PEER="$ROOT/tests/peer/peer.sh"

echo "==> integration tests against $FLUSS_BOOTSTRAP"
export FLUSS_INTEGRATION_REQUIRED=1
$GO test -count=1 -tags integration -timeout 30m ./tests/... || status=1

echo "==> telemetry into a real OpenTelemetry Collector"
# The collector binary is cached outside the clone (per machine), so only the
# first run on a machine pays its ~4 minute build.
export OTELCOL_CACHE_DIR=${OTELCOL_CACHE_DIR:-$HOME/.cache/fluss-gateway-go/otelcol}
bash tests/otel/run.sh || status=1

exit $status
