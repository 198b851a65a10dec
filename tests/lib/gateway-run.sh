# Sourced (not run) by the scripts that start a local Fluss cluster and a
# gateway binary of their own: tests/load/run.sh, tests/resources/run.sh,
# tests/soak/run.sh, tests/bench-native/run.sh and scan.sh. It holds what
# they share: stopping the gateway and the cluster on exit, starting a
# cluster on the caller's ports, and waiting for the gateway's /ready.
#
# The caller runs from the repository root and sets, as it goes:
#   gw_pid           the gateway's pid (stopped on exit: TERM, 10 s, KILL)
#   db               a database to drop with the peer client on exit ("" none)
#   started_cluster  1 once gw_cluster_start has started a cluster (stopped,
#                    state removed, on exit)
#   GW_RUN_LABEL     how the exit message names the cluster ("the load-test cluster")

started_cluster=0
gw_pid=""
db=""
GW_RUN_LABEL=${GW_RUN_LABEL:-the cluster}

gw_run_cleanup() {
  local rc=$?
  if [[ -n $gw_pid ]] && kill -0 "$gw_pid" 2>/dev/null; then
    kill -TERM "$gw_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$gw_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$gw_pid" 2>/dev/null || true
  fi
  if [[ -n $db ]]; then bash tests/peer/peer.sh drop-database "$db" >/dev/null 2>&1 || true; fi
  if [[ $started_cluster == 1 ]]; then
    echo "==> stopping $GW_RUN_LABEL" >&2
    FLUSS_KEEP_STATE=0 bash deployments/local/fluss-cluster.sh stop >&2 || true
  fi
  exit $rc
}
trap gw_run_cleanup EXIT
trap 'exit 130' INT TERM

# gw_cluster_start: fetches the jars and starts a local cluster with the
# FLUSS_* variables the caller exported (ports, state directory, tablet
# servers); sets started_cluster=1 and GW_RUN_BOOTSTRAP to its address.
gw_cluster_start() {
  bash deployments/local/fluss-cluster.sh fetch >&2
  started_cluster=1
  local out
  out=$(bash deployments/local/fluss-cluster.sh start)
  GW_RUN_BOOTSTRAP=$(echo "$out" | sed -n 's/^FLUSS_BOOTSTRAP=//p')
}

# gw_await_ready PORT LOG [TRIES]: waits 0.2 s at a time, TRIES times (100),
# for the gateway (gw_pid) on 127.0.0.1:PORT to answer /ready; fails with the
# end of LOG when it dies or does not get ready.
gw_await_ready() {
  local port=$1 log=$2 tries=${3:-100} i
  for i in $(seq 1 "$tries"); do
    curl -fsS "http://127.0.0.1:$port/ready" >/dev/null 2>&1 && return 0
    kill -0 "$gw_pid" 2>/dev/null || { tail -30 "$log" >&2; echo "gateway died" >&2; exit 1; }
    sleep 0.2
  done
  tail -30 "$log" >&2
  echo "gateway not ready" >&2
  exit 1
}
