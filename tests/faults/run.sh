#!/usr/bin/env bash
# Fault tests (`make test-faults`): starts a local Fluss cluster of its own —
# ZooKeeper, coordinator and 3 tablet servers, default replication factor 3 —
# on ports that do not collide with the default cluster (29123/29124/29181,
# state in .cache/fluss-faults), starts the gateway binary against it, runs
# the tests of tests/faults with the `faults` build tag, and stops both on
# exit. The tests SIGKILL/SIGSTOP tablet servers of THIS cluster only (pid
# files in its state dir).
#
#   bash tests/faults/run.sh                    # everything, ~4 minutes
#   bash tests/faults/run.sh 'TestDeadline'     # a -run pattern
#
# Environment:
#   FLUSS_FAULTS_VIA      http (default): write through the gateway's records
#                         route; writer: through adapters/fluss.Open(...).Writer()
#   FLUSS_FAULTS_PORT / _SASL_PORT / _ZK_PORT / _GATEWAY_PORT  (29123/29124/29181/28080)
#   FLUSS_FAULTS_STATE_DIR  cluster state ($repo/.cache/fluss-faults)
#   FLUSS_FAULTS_KEEP_CLUSTER=1  leave the cluster (and gateway) running
#   FLUSS_VERSION         Fluss version of the cluster (0.9.1-incubating; 1.0-SNAPSHOT,
#                         see deployments/local/fluss-cluster.sh)
#   FLUSS_FAULTS_TABLET_SERVERS / _REPLICATION_FACTOR  (3 / 3)
#   FLUSS_FAULTS_METRICS_PORT  serve the gateway's Prometheus metrics there and export
#                         FLUSS_BP_METRICS_URL (default: metrics off)
#   FLUSS_FAULTS_SKIP     a `go test -skip` pattern
#   FLUSS_FAULTS_LOG      where the output is kept ($repo/.cache/faults-last.log; the
#                         gateway's log next to it, faults-last-gateway.log)
#   FLUSS_EXTRA_CONF      extra server.yaml lines for the cluster (fluss-cluster.sh)
#   FLUSS_FAULTS_EXTENDED=1  the extended form: also TestFaultsKillCoordinator, a partitioned
#                         primary-key table written with upserts, partial updates and deletes
#                         under every fault (mixed_test.go), 20 kills / freezes / coordinator
#                         kills, a 4 s ZooKeeper session (so a killed server can re-register
#                         after 6 s), UP 3s, DOWN 6s, FREEZE 7s; CPU heavy, ~10 minutes
#   knobs of the tests: FLUSS_FAULTS_CYCLES, _UP, _DOWN, _DEADLINE, _RATE,
#   _WORKERS, _BATCH, _FREEZES, _FREEZE, _ONLY (see kills_test.go)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
GO=${GO:-go}
PATTERN=${1:-'TestFaults|TestDeadline'}

export FLUSS_PORT=${FLUSS_FAULTS_PORT:-29123}
export FLUSS_SASL_PORT=${FLUSS_FAULTS_SASL_PORT:-29124}
export FLUSS_ZK_PORT=${FLUSS_FAULTS_ZK_PORT:-29181}
export FLUSS_STATE_DIR=${FLUSS_FAULTS_STATE_DIR:-$ROOT/.cache/fluss-faults}
export FLUSS_TABLET_SERVERS=${FLUSS_FAULTS_TABLET_SERVERS:-3}
export FLUSS_REPLICATION_FACTOR=${FLUSS_FAULTS_REPLICATION_FACTOR:-3}
GW_PORT=${FLUSS_FAULTS_GATEWAY_PORT:-28080}
METRICS_PORT=${FLUSS_FAULTS_METRICS_PORT:-}
LOG=${FLUSS_FAULTS_LOG:-$ROOT/.cache/faults-last.log}
mkdir -p "$(dirname "$LOG")"
VIA=${FLUSS_FAULTS_VIA:-http}
CLUSTER="bash deployments/local/fluss-cluster.sh"

gw_pid=""
cleanup() {
  local rc=$?
  if [[ "${FLUSS_FAULTS_KEEP_CLUSTER:-0}" == 1 ]]; then
    echo "==> keeping the cluster (FLUSS_STATE_DIR=$FLUSS_STATE_DIR) and gateway (pid ${gw_pid:-none})"
    exit $rc
  fi
  if [[ -n $gw_pid ]] && kill -0 "$gw_pid" 2>/dev/null; then
    echo "==> stopping the gateway ($gw_pid)"
    kill -TERM "$gw_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$gw_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$gw_pid" 2>/dev/null || true
  fi
  # The gateway's log (access lines by request id: the late answers the
  # tests list) outlives the state dir.
  [[ -f $FLUSS_STATE_DIR/log/gateway.log ]] && cp "$FLUSS_STATE_DIR/log/gateway.log" "${LOG%.log}-gateway.log" || true
  echo "==> stopping the fault-test cluster ($FLUSS_STATE_DIR)"
  # A frozen server would ignore TERM until resumed.
  for f in "$FLUSS_STATE_DIR"/run/*.pid; do [[ -s $f ]] && kill -CONT "$(cat "$f")" 2>/dev/null || true; done
  FLUSS_KEEP_STATE=0 $CLUSTER stop || true
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ ${FLUSS_FAULTS_EXTENDED:-0} == 1 ]]; then
  export FLUSS_EXTRA_CONF="zookeeper.client.session-timeout: 4 s${FLUSS_EXTRA_CONF:+
$FLUSS_EXTRA_CONF}"
fi
echo "==> fault-test cluster: Fluss ${FLUSS_VERSION:-0.9.1-incubating}, $FLUSS_TABLET_SERVERS tablet servers, replication factor $FLUSS_REPLICATION_FACTOR, port $FLUSS_PORT, state $FLUSS_STATE_DIR"
$CLUSTER fetch
out=$($CLUSTER start)
echo "$out"
eval "$(echo "$out" | grep -E '^FLUSS_[A-Z_]+=' | sed 's/^/export /')"

echo "==> peer client"
bash tests/peer/setup.sh >/dev/null
export FLUSS_PEER="$ROOT/tests/peer/peer.sh"

if [[ $VIA == http ]]; then
  echo "==> gateway on 127.0.0.1:$GW_PORT"
  $GO build -o "$FLUSS_STATE_DIR/fluss-gateway" ./bootstrap/cmd/gateway
  metrics=(FLUSS_GATEWAY__METRICS__ENABLED=false)
  if [[ -n $METRICS_PORT ]]; then
    metrics=(FLUSS_GATEWAY__METRICS__ENABLED=true FLUSS_GATEWAY__METRICS__EXPORTER__PROMETHEUS__LISTEN=127.0.0.1:$METRICS_PORT)
    export FLUSS_BP_METRICS_URL="http://127.0.0.1:$METRICS_PORT/metrics"
  fi
  env "${metrics[@]}" \
  FLUSS_GATEWAY__REST__LISTEN=127.0.0.1:$GW_PORT \
  FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS=$FLUSS_BOOTSTRAP \
  FLUSS_GATEWAY__REST__WRITE__REQUEST_TIMEOUT=30s \
    "$FLUSS_STATE_DIR/fluss-gateway" --config configs/local.yaml > "$FLUSS_STATE_DIR/log/gateway.log" 2>&1 &
  gw_pid=$!
  for i in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$GW_PORT/ready" >/dev/null 2>&1 && break
    kill -0 "$gw_pid" 2>/dev/null || { tail -30 "$FLUSS_STATE_DIR/log/gateway.log"; echo "gateway died" >&2; exit 1; }
    [[ $i == 100 ]] && { tail -30 "$FLUSS_STATE_DIR/log/gateway.log"; echo "gateway not ready" >&2; exit 1; }
    sleep 0.2
  done
  export FLUSS_FAULTS_GATEWAY_URL="http://127.0.0.1:$GW_PORT"
fi

echo "==> fault tests (-run '$PATTERN', writes via $VIA, extended ${FLUSS_FAULTS_EXTENDED:-0})"
export FLUSS_FAULTS_REQUIRED=1
if [[ ${FLUSS_FAULTS_EXTENDED:-0} == 1 ]]; then
  export FLUSS_FAULTS_CYCLES=${FLUSS_FAULTS_CYCLES:-20}
  export FLUSS_FAULTS_FREEZES=${FLUSS_FAULTS_FREEZES:-20}
  export FLUSS_FAULTS_COORD_KILLS=${FLUSS_FAULTS_COORD_KILLS:-20}
  export FLUSS_FAULTS_UP=${FLUSS_FAULTS_UP:-3s}
  export FLUSS_FAULTS_DOWN=${FLUSS_FAULTS_DOWN:-6s}
  export FLUSS_FAULTS_FREEZE=${FLUSS_FAULTS_FREEZE:-7s}
fi
export FLUSS_FAULTS_CYCLES=${FLUSS_FAULTS_CYCLES:-5}
export FLUSS_FAULTS_UP=${FLUSS_FAULTS_UP:-5s}
export FLUSS_FAULTS_DOWN=${FLUSS_FAULTS_DOWN:-11s}
skip=()
[[ -n ${FLUSS_FAULTS_SKIP:-} ]] && skip=(-skip "$FLUSS_FAULTS_SKIP")
$GO test -tags faults -count=1 -v -timeout 40m -run "$PATTERN" "${skip[@]}" ./tests/faults/ 2>&1 |
  grep --line-buffered -v -E '^=== (RUN|PAUSE|CONT|NAME)' | tee "$LOG"
exit "${PIPESTATUS[0]}"
