#!/usr/bin/env bash
# Load test (`make load`): the gateway binary against a local Fluss cluster,
# driven on loopback by tools/load at twice its sustainable rate.
#
#   bash tests/load/run.sh
#
# It starts a cluster of its own (1 tablet server unless LOAD_TABLET_SERVERS,
# ports 47123/47124/47181 or LOAD_PORT/LOAD_SASL_PORT/LOAD_ZK_PORT, state
# .cache/fluss-load) unless LOAD_BOOTSTRAP
# names a running one, creates a primary-key table with the peer client,
# starts the gateway (127.0.0.1:28081), runs the generator — calibration
# (closed loop) then overload (open loop at LOAD_FACTOR × the calibrated
# rate) — while sampling the gateway's VmRSS every second, and stops all it
# started. The report is printed and written to .cache/load-last.json.
#
# Environment: LOAD_BOOTSTRAP, LOAD_TABLET_SERVERS (1), LOAD_DURATION (60s),
# LOAD_CALIBRATE (15s), LOAD_CONCURRENCY (32), LOAD_ROWS per request (100),
# LOAD_DEADLINE per request (5s), LOAD_FACTOR (2), LOAD_BUCKETS (6),
# LOAD_OP (upsert|append), LOAD_GATEWAY_PORT (28081), plus any
# FLUSS_GATEWAY__* override for the gateway (e.g.
# FLUSS_GATEWAY__REST__WRITE__MAX_CONCURRENT_REQUESTS=16).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
GO=${GO:-go}
GW_PORT=${LOAD_GATEWAY_PORT:-28081}
OP=${LOAD_OP:-upsert}
OUT="$ROOT/.cache/load"
mkdir -p "$OUT"

GW_RUN_LABEL="the load-test cluster"
source tests/lib/gateway-run.sh

if [[ -z "${LOAD_BOOTSTRAP:-}" ]]; then
  export FLUSS_PORT=${LOAD_PORT:-47123} FLUSS_SASL_PORT=${LOAD_SASL_PORT:-47124} FLUSS_ZK_PORT=${LOAD_ZK_PORT:-47181}
  export FLUSS_STATE_DIR="$ROOT/.cache/fluss-load"
  export FLUSS_TABLET_SERVERS=${LOAD_TABLET_SERVERS:-1}
  export FLUSS_REPLICATION_FACTOR=${LOAD_REPLICATION_FACTOR:-$FLUSS_TABLET_SERVERS}
  echo "==> load-test cluster: $FLUSS_TABLET_SERVERS tablet server(s), port $FLUSS_PORT"
  gw_cluster_start
  LOAD_BOOTSTRAP=$GW_RUN_BOOTSTRAP
fi
export FLUSS_BOOTSTRAP=$LOAD_BOOTSTRAP
bash tests/peer/setup.sh >/dev/null

db="load_$(date +%s)"
pk=(--primary-key id)
[[ $OP == append ]] && pk=()
bash tests/peer/peer.sh create-database "$db" >/dev/null
bash tests/peer/peer.sh create-table "$db" t --buckets "${LOAD_BUCKETS:-6}" "${pk[@]}" \
  --schema '[{"name":"id","type":"bigint NOT NULL"},{"name":"worker","type":"int"},{"name":"payload","type":"string"}]' >/dev/null

echo "==> gateway on 127.0.0.1:$GW_PORT against $FLUSS_BOOTSTRAP"
$GO build -o "$OUT/fluss-gateway" ./bootstrap/cmd/gateway
$GO build -o "$OUT/load" ./tools/load
FLUSS_GATEWAY__REST__LISTEN=127.0.0.1:$GW_PORT \
FLUSS_GATEWAY__METRICS__ENABLED=false \
FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS=$FLUSS_BOOTSTRAP \
  "$OUT/fluss-gateway" --config configs/local.yaml > "$OUT/gateway.log" 2>&1 &
gw_pid=$!
gw_await_ready "$GW_PORT" "$OUT/gateway.log"

echo "==> load: $OP into $db.t, ${LOAD_ROWS:-100} rows/request, deadline ${LOAD_DEADLINE:-5s}"
"$OUT/load" -url "http://127.0.0.1:$GW_PORT" -db "$db" -table t -op "$OP" -pid "$gw_pid" \
  -rows "${LOAD_ROWS:-100}" -concurrency "${LOAD_CONCURRENCY:-32}" -calibrate "${LOAD_CALIBRATE:-15s}" \
  -duration "${LOAD_DURATION:-60s}" -factor "${LOAD_FACTOR:-2}" -timeout "${LOAD_DEADLINE:-5s}" \
  -json "$ROOT/.cache/load-last.json"
echo "gateway log: $(wc -l < "$OUT/gateway.log") lines in $OUT/gateway.log"
