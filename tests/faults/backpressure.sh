#!/usr/bin/env bash
# Cooperative KV backpressure against a real Fluss 1.0 tablet server
# (`make test-backpressure`; apache/fluss PR #3463): tests/faults/run.sh with
# one tablet server of Fluss 1.0-SNAPSHOT (jars from FLUSS_SNAPSHOT_DIR, see
# deployments/local/fluss-cluster.sh) configured so that RocksDB L0 files pile
# up under a modest write load, the gateway with its Prometheus endpoint, and
# TestBackpressureRealCluster (tests/faults/pressure_test.go), which prints the
# figures (requests, verdicts, latency with and without pressure, throttle
# time, 429s with Retry-After, lost/phantom rows checked by the peer client).
#
# Server options (FLUSS_EXTRA_CONF, appended to server.yaml):
#   kv.backpressure.l0-slowdown-trigger: 1   pressure from the 2nd L0 file on:
#       p = (L0 - 1) / (20 - 1), RocksDB's level0 slowdown trigger being 20
#   kv.rocksdb.writebuffer.size: 256 kb      a memtable flush (one L0 file) per 256 KiB
#   kv.rocksdb.thread.num: 1                 one background thread, compaction lags
# Knobs: FLUSS_BP_* (see pressure_test.go), FLUSS_BP_VERSION (1.0-SNAPSHOT),
# and those of tests/faults/run.sh. Output kept in .cache/backpressure-last.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
export FLUSS_VERSION=${FLUSS_BP_VERSION:-1.0-SNAPSHOT}
export FLUSS_FAULTS_TABLET_SERVERS=1 FLUSS_FAULTS_REPLICATION_FACTOR=1
export FLUSS_FAULTS_METRICS_PORT=${FLUSS_FAULTS_METRICS_PORT:-29095}
export FLUSS_FAULTS_LOG=${FLUSS_FAULTS_LOG:-$PWD/.cache/backpressure-last.log}
export FLUSS_FAULTS_VIA=http
export FLUSS_EXTRA_CONF="kv.backpressure.l0-slowdown-trigger: 1
kv.rocksdb.writebuffer.size: 256 kb
kv.rocksdb.writebuffer.count: 2
kv.rocksdb.thread.num: 1${FLUSS_EXTRA_CONF:+
$FLUSS_EXTRA_CONF}"
exec bash tests/faults/run.sh TestBackpressureRealCluster
