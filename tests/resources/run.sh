#!/usr/bin/env bash
# Resource benchmark (`make bench-resources`, issue 21): the gateway binary
# with its default configuration (password mode, so that unauthenticated
# requests can be tried; a descriptor limit of 1,024) against a local Fluss
# cluster, driven by tools/resbench: writes of entries × concurrency into
# primary-key and log tables, 128-key lookups on 256 KiB rows, 32 MiB bodies,
# gzip bodies, unauthenticated 32 MiB Content-Length, descriptor exhaustion.
# It prints peak RSS (VmHWM), peak descriptors, rows/s, 429 counts and
# whether every row landed once (the peer client's end offsets).
#
#   bash tests/resources/run.sh           # the full benchmark (long)
#   bash tests/resources/run.sh --short   # the CI form (< 2 min): 500×16, small
#                                         # bursts; fails when a point's peak RSS
#                                         # exceeds RES_MAX_RSS_MIB (256), /health
#                                         # takes > 1 s after exhaustion, or a row
#                                         # is lost or duplicated
#
# It starts a cluster of its own (ports RES_PORT/RES_SASL_PORT/RES_ZK_PORT,
# 30123/30124/30181, below the ephemeral range; state .cache/fluss-resources)
# unless FLUSS_BOOTSTRAP names
# a running one. Environment: RES_GATEWAY_PORT (28082), RES_POINTS,
# RES_ROWS, RES_MAX_RSS_MIB, RES_FD_LIMIT (1024), RES_CGROUP (a cgroup
# directory, v1 memory or v2, the gateway joins before it starts, e.g. one
# whose memory limit is the Helm chart's 512 MiB: GOMEMLIMIT and the budget
# are then derived from it), plus any FLUSS_GATEWAY__* override for the
# gateway.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
GO=${GO:-go}
GW_PORT=${RES_GATEWAY_PORT:-28082}
OUT="$ROOT/.cache/resources"
mkdir -p "$OUT"
short=0
[[ ${1:-} == --short ]] && short=1

GW_RUN_LABEL="the resource-benchmark cluster"
source tests/lib/gateway-run.sh

if [[ -z "${FLUSS_BOOTSTRAP:-}" ]]; then
  export FLUSS_PORT=${RES_PORT:-30123} FLUSS_SASL_PORT=${RES_SASL_PORT:-30124} FLUSS_ZK_PORT=${RES_ZK_PORT:-30181}
  export FLUSS_STATE_DIR="$ROOT/.cache/fluss-resources"
  gw_cluster_start
  export FLUSS_BOOTSTRAP=$GW_RUN_BOOTSTRAP
fi
bash tests/peer/setup.sh >/dev/null
export FLUSS_PEER=${FLUSS_PEER:-$ROOT/tests/peer/peer.sh}

db="resbench_$(date +%s)"
echo "==> gateway on 127.0.0.1:$GW_PORT against $FLUSS_BOOTSTRAP (default configuration, password mode, descriptor limit ${RES_FD_LIMIT:-1024})"
$GO build -o "$OUT/fluss-gateway" ./bootstrap/cmd/gateway
$GO build -o "$OUT/resbench" ./tools/resbench
(
  ulimit -n "${RES_FD_LIMIT:-1024}" 2>/dev/null || echo "cannot set the descriptor limit to ${RES_FD_LIMIT:-1024}; keeping $(ulimit -n)" >&2
  if [[ -n ${RES_CGROUP:-} ]]; then
    echo "$BASHPID" > "$RES_CGROUP/cgroup.procs" || { echo "cannot join the cgroup $RES_CGROUP" >&2; exit 1; }
  fi
  FLUSS_GATEWAY__REST__LISTEN=127.0.0.1:$GW_PORT \
  FLUSS_GATEWAY__METRICS__ENABLED=false \
  FLUSS_GATEWAY__SECURITY__AUTHENTICATION=password \
  FLUSS_GATEWAY__SECURITY__USERS=bench:bench-secret \
  FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS=$FLUSS_BOOTSTRAP \
    exec "$OUT/fluss-gateway" --config configs/local.yaml
) > "$OUT/gateway.log" 2>&1 &
gw_pid=$!
gw_await_ready "$GW_PORT" "$OUT/gateway.log"
grep -h '"memory budget"\|"REST connection limits"' "$OUT/gateway.log" || true

args=(-url "http://127.0.0.1:$GW_PORT" -pid "$gw_pid" -db "$db" -user bench -password bench-secret -peer "$FLUSS_PEER")
if [[ $short == 1 ]]; then
  args+=(-points "${RES_POINTS:-500x16}" -rows "${RES_ROWS:-16000}" -lookup-concurrency 8 -big-bodies 1 -gzip-bodies 1
         -unauth-conns 32 -fd-conns 1100 -assert-rss-mib "${RES_MAX_RSS_MIB:-256}")
else
  args+=(-points "${RES_POINTS:-500x16,2000x16,10000x16,500x64,2000x64,10000x64}" -rows "${RES_ROWS:-200000}")
  [[ -n ${RES_MAX_RSS_MIB:-} ]] && args+=(-assert-rss-mib "$RES_MAX_RSS_MIB")
fi
"$OUT/resbench" "${args[@]}"
