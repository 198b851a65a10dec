#!/usr/bin/env bash
# Smoke test of the peer CLI against a running local cluster (deployments/local/fluss-cluster.sh
# start). Uses its own database and drops it at the end. Prints "N passed, N failed".
# env: FLUSS_BOOTSTRAP (127.0.0.1:19123), FLUSS_SASL_BOOTSTRAP (127.0.0.1:19124)
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PLAIN="${FLUSS_BOOTSTRAP:-127.0.0.1:19123}"
SASL="${FLUSS_SASL_BOOTSTRAP:-127.0.0.1:19124}"
ADMIN=(--bootstrap "$SASL" --sasl-user admin --sasl-password admin-secret)
DB="peer_smoke_$$"
pass=0; fail=0

check() { # description expected-substring command...
  local what=$1 want=$2 out; shift 2
  out="$("$@" 2>&1)"
  if [[ $out == *"$want"* ]]; then pass=$((pass + 1)); echo "ok   $what"
  else fail=$((fail + 1)); echo "FAIL $what: wanted '$want', got: $out"; fi
}
P() { "$HERE/peer.sh" "${ADMIN[@]}" "$@"; }

check "server-nodes (plaintext)" '"type": "TabletServer"' "$HERE/peer.sh" --bootstrap "$PLAIN" server-nodes
check "server-nodes (sasl admin)" '"type": "TabletServer"' P server-nodes
check "bad password" '"code": 46' "$HERE/peer.sh" --bootstrap "$SASL" --sasl-user bob --sasl-password wrong list-databases
check "create-database" '"created": true' P create-database "$DB"
check "database-exists" '"exists": true' P database-exists "$DB"
check "list-databases" "\"$DB\"" P list-databases
check "create pk table" '"created": true' P create-table "$DB" kv --primary-key id --buckets 2 \
  --schema '[{"name":"id","type":"int NOT NULL"},{"name":"name","type":"string"},{"name":"amount","type":"decimal(10,2)"},{"name":"ts","type":"timestamp(3)"},{"name":"ltz","type":"timestamp_ltz(6)"},{"name":"d","type":"date"},{"name":"b","type":"bytes"}]'
check "get-table" '"primary_keys": ["id"]' P get-table "$DB" kv
check "upsert" '"upserted": 2' P upsert "$DB" kv \
  --row '{"id":1,"name":"Alice","amount":"12.34","ts":"2024-01-02T03:04:05.123","ltz":"2024-01-02T03:04:05.123456Z","d":"2024-01-02","b":"AAE="}' \
  --row '{"id":2,"name":"Bob"}'
check "lookup hit" '"amount": "12.34", "ts": "2024-01-02T03:04:05.123000"' P lookup "$DB" kv --key '{"id":1}'
check "lookup miss" '"found": false' P lookup "$DB" kv --key '{"id":99}'
check "delete" '"deleted": 1' P delete "$DB" kv --key '{"id":2}'
check "scan pk changelog" '"change_type": "-D"' P scan "$DB" kv
check "create log table" '"created": true' P create-table "$DB" events --schema '{"id":"bigint","msg":"string"}' --buckets 1
check "append" '"appended": 2' P append "$DB" events --row '{"id":1,"msg":"a"}' --row '{"id":2,"msg":"b"}'
check "scan log bucket 0" '"offset": 1, ' P scan "$DB" events --bucket 0
check "offsets" '"latest": 2' P offsets "$DB" events
check "drop-database" '"dropped": true' P drop-database "$DB"
check "database gone" '"exists": false' P database-exists "$DB"

echo "$pass passed, $fail failed"
((fail == 0))
