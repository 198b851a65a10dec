#!/usr/bin/env bash
# A second local Fluss cluster with the authorizer on (authorizer.enabled: true,
# super user User:admin), for the identity/ACL integration tests
# (tests/integration/identity_*_test.go). It runs next to the shared cluster of
# deployments/local/fluss-cluster.sh on its own ports and state directory:
#
#   plaintext client listener  127.0.0.1:$FLUSS_ACL_PORT       (31123)
#   SASL/PLAIN client listener 127.0.0.1:$FLUSS_ACL_SASL_PORT  (31124)
#   ZooKeeper                  127.0.0.1:$FLUSS_ACL_ZK_PORT    (32181)
#   state                      $FLUSS_ACL_STATE_DIR            ($repo/.cache/fluss-acl)
#
# The ports lie below the kernel's ephemeral range (32768-60999 by default),
# so that no outgoing connection can hold one when the cluster starts.
#
# SASL users: admin/admin-secret (super user), alice/alice-secret, bob/bob-secret.
#
# usage: tests/integration/acl-cluster.sh start|stop|status
#
# start and status print the lines the tests read (eval them with `export`):
#   FLUSS_ACL_BOOTSTRAP=127.0.0.1:31123
#   FLUSS_ACL_SASL_BOOTSTRAP=127.0.0.1:31124
# e.g. in tests/run.sh:
#   eval "$(bash tests/integration/acl-cluster.sh start | grep -E '^FLUSS_ACL_[A-Z_]+=' | sed 's/^/export /')"
#   trap 'bash tests/integration/acl-cluster.sh stop' EXIT
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"

export FLUSS_PORT="${FLUSS_ACL_PORT:-31123}"
export FLUSS_SASL_PORT="${FLUSS_ACL_SASL_PORT:-31124}"
export FLUSS_ZK_PORT="${FLUSS_ACL_ZK_PORT:-32181}"
export FLUSS_STATE_DIR="${FLUSS_ACL_STATE_DIR:-$REPO/.cache/fluss-acl}"
export FLUSS_AUTHORIZER=1
export FLUSS_TABLET_SERVERS=1

translate() { # FLUSS_BOOTSTRAP=... -> FLUSS_ACL_BOOTSTRAP=...
  sed -n -e 's/^FLUSS_BOOTSTRAP=/FLUSS_ACL_BOOTSTRAP=/p' -e 's/^FLUSS_SASL_BOOTSTRAP=/FLUSS_ACL_SASL_BOOTSTRAP=/p' \
         -e 's/^FLUSS_ZK=/FLUSS_ACL_ZK=/p' -e 's/^FLUSS_STATUS=/FLUSS_ACL_STATUS=/p'
}

case "${1:-}" in
  start)
    out="$(bash "$REPO/deployments/local/fluss-cluster.sh" start)"
    translate <<<"$out"
    ;;
  status)
    rc=0
    out="$(bash "$REPO/deployments/local/fluss-cluster.sh" status)" || rc=$?
    grep -v '^FLUSS_' <<<"$out" || true
    translate <<<"$out"
    exit $rc
    ;;
  stop)
    bash "$REPO/deployments/local/fluss-cluster.sh" stop
    ;;
  *)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
