#!/usr/bin/env bash
# Soak (`make soak`): the gateway binary against a local Fluss cluster, driven
# by tools/soak with a steady mix of writes, lookups and DDL at half of its
# calibrated peak for SOAK_DURATION (1h), reporting per interval the
# gateway's RSS, open fds, goroutines and the p99 of each kind of request.
# Flat is the target; the run fails on request failures, lookups that miss
# written rows, or fd/goroutine growth (tools/soak flags).
#
#   bash tests/soak/run.sh                         # one hour
#   SOAK_DURATION=90s SOAK_INTERVAL=15s bash tests/soak/run.sh   # the CI form
#
# It starts a cluster of its own (1 tablet server, ports SOAK_PORT/
# SOAK_SASL_PORT/SOAK_ZK_PORT = 30323/30324/30381, below the ephemeral range;
# state .cache/fluss-soak)
# unless SOAK_BOOTSTRAP (or FLUSS_BOOTSTRAP) names a running one, starts the
# gateway (127.0.0.1:SOAK_GATEWAY_PORT, metrics on SOAK_METRICS_PORT), runs
# the driver and stops all it started. The report is also written to
# .cache/soak/soak.log.
#
# Environment: SOAK_DURATION (1h), SOAK_INTERVAL (1m), SOAK_CALIBRATE (20s),
# SOAK_FRACTION (0.5), SOAK_RATE (fixed requests/s, skips calibration),
# SOAK_CONCURRENCY (16), SOAK_ROWS (20), SOAK_DDL_EVERY (10s),
# SOAK_GATEWAY_PORT (28082), SOAK_METRICS_PORT (28083), plus any
# FLUSS_GATEWAY__* override for the gateway.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
GO=${GO:-go}
GW_PORT=${SOAK_GATEWAY_PORT:-28082}
METRICS_PORT=${SOAK_METRICS_PORT:-28083}
OUT="$ROOT/.cache/soak"
mkdir -p "$OUT"

GW_RUN_LABEL="the soak cluster"
source tests/lib/gateway-run.sh

BOOT=${SOAK_BOOTSTRAP:-${FLUSS_BOOTSTRAP:-}}
if [[ -z $BOOT ]]; then
  export FLUSS_PORT=${SOAK_PORT:-30323} FLUSS_SASL_PORT=${SOAK_SASL_PORT:-30324} FLUSS_ZK_PORT=${SOAK_ZK_PORT:-30381}
  export FLUSS_STATE_DIR="$ROOT/.cache/fluss-soak" FLUSS_TABLET_SERVERS=1 FLUSS_REPLICATION_FACTOR=1
  echo "==> soak cluster: port $FLUSS_PORT"
  gw_cluster_start
  BOOT=$GW_RUN_BOOTSTRAP
fi

echo "==> gateway on 127.0.0.1:$GW_PORT (metrics :$METRICS_PORT) against $BOOT"
$GO build -o "$OUT/fluss-gateway" ./bootstrap/cmd/gateway
$GO build -o "$OUT/soak" ./tools/soak
FLUSS_GATEWAY__REST__LISTEN=127.0.0.1:$GW_PORT \
FLUSS_GATEWAY__METRICS__ENABLED=true \
FLUSS_GATEWAY__METRICS__EXPORTER__PROMETHEUS__LISTEN=127.0.0.1:$METRICS_PORT \
FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS=$BOOT \
  "$OUT/fluss-gateway" --config configs/local.yaml > "$OUT/gateway.log" 2>&1 &
gw_pid=$!
gw_await_ready "$GW_PORT" "$OUT/gateway.log"

rate=()
[[ -n ${SOAK_RATE:-} ]] && rate=(-rate "$SOAK_RATE")
"$OUT/soak" -url "http://127.0.0.1:$GW_PORT" -metrics "http://127.0.0.1:$METRICS_PORT/metrics" -pid "$gw_pid" \
  -duration "${SOAK_DURATION:-1h}" -interval "${SOAK_INTERVAL:-1m}" -calibrate "${SOAK_CALIBRATE:-20s}" \
  -fraction "${SOAK_FRACTION:-0.5}" -concurrency "${SOAK_CONCURRENCY:-16}" -rows "${SOAK_ROWS:-20}" \
  -ddl-every "${SOAK_DDL_EVERY:-10s}" "${rate[@]}" 2>&1 | tee "$OUT/soak.log"
exit "${PIPESTATUS[0]}"
