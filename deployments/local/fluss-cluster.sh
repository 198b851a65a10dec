#!/usr/bin/env bash
# Local Apache Fluss cluster for integration tests: ZooKeeper + 1 coordinator + N tablet
# servers on 127.0.0.1, started from the Maven Central jars (no Docker, no tarball).
#
# usage: deployments/local/fluss-cluster.sh fetch|start|stop|status
#
# Environment (all optional):
#   FLUSS_VERSION         fluss-server/fluss-client version     (0.9.1-incubating)
#                         0.9.1-incubating: jars from Maven Central;
#                         1.0-SNAPSHOT: jars from FLUSS_SNAPSHOT_DIR (not on Maven Central),
#                         checked against the sha256 in its README.md, copied into FLUSS_HOME
#   FLUSS_SNAPSHOT_DIR    where the 1.0-SNAPSHOT jars are        ($repo/../shared/fluss-snapshot)
#   FLUSS_EXTRA_CONF      extra server.yaml lines ("key: value", newline-separated), appended
#                         to the coordinator's and every tablet server's server.yaml (later
#                         lines win, so they override the script's own settings)
#   FLUSS_EXTRA_CONF_FILE a file of such lines, appended after FLUSS_EXTRA_CONF
#   LOG4J_VERSION         log4j2 backend version                 (2.25.4)
#   FLUSS_HOME            jar cache                              ($repo/.cache/fluss)
#   FLUSS_STATE_DIR       configs, data, logs, pid files         ($repo/.cache/fluss-state)
#   FLUSS_TABLET_SERVERS  number of tablet servers, 1..3         (1)
#   FLUSS_ZK_PORT         ZooKeeper client port                  (12181)
#   FLUSS_PORT            coordinator plaintext client listener  (19123)
#   FLUSS_SASL_PORT       coordinator SASL/PLAIN client listener (19124)
#   FLUSS_AUTHORIZER      1 = authorizer.enabled (super user User:admin)  (0)
#   FLUSS_REPLICATION_FACTOR  default.replication.factor         (1)
#   FLUSS_ZK_HEAP / FLUSS_CS_HEAP / FLUSS_TS_HEAP  -Xmx values  (128m / 512m / 768m)
#   FLUSS_START_TIMEOUT   seconds to wait for readiness          (120)
#   FLUSS_KEEP_STATE      1 = stop keeps $FLUSS_STATE_DIR        (0)
#   FLUSS_JAVA            java binary (Java 17)                  (java)
#
# SASL/PLAIN users: admin/admin-secret (super user), alice/alice-secret, bob/bob-secret.
# start and status print machine-readable lines:
#   FLUSS_BOOTSTRAP=127.0.0.1:19123
#   FLUSS_SASL_BOOTSTRAP=127.0.0.1:19124
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"

V="${FLUSS_VERSION:-0.9.1-incubating}"
LOG4J="${LOG4J_VERSION:-2.25.4}"
HOME_DIR="${FLUSS_HOME:-$REPO/.cache/fluss}"
SNAP_DIR="${FLUSS_SNAPSHOT_DIR:-$REPO/../shared/fluss-snapshot}"
EXTRA_CONF="${FLUSS_EXTRA_CONF:-}"
EXTRA_CONF_FILE="${FLUSS_EXTRA_CONF_FILE:-}"
STATE="${FLUSS_STATE_DIR:-$REPO/.cache/fluss-state}"
N="${FLUSS_TABLET_SERVERS:-1}"
ZK_PORT="${FLUSS_ZK_PORT:-12181}"
PORT="${FLUSS_PORT:-19123}"
SASL_PORT="${FLUSS_SASL_PORT:-19124}"
AUTHZ="${FLUSS_AUTHORIZER:-0}"
RF="${FLUSS_REPLICATION_FACTOR:-1}"
ZK_HEAP="${FLUSS_ZK_HEAP:-128m}"
CS_HEAP="${FLUSS_CS_HEAP:-512m}"
TS_HEAP="${FLUSS_TS_HEAP:-768m}"
TIMEOUT="${FLUSS_START_TIMEOUT:-120}"
JAVA="${FLUSS_JAVA:-java}"
MVN_DEP_PLUGIN="org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
HOST=127.0.0.1

LIB="$HOME_DIR/$V/lib"        # fluss-server + log4j (server class path)
CLIENT="$HOME_DIR/$V/client"  # fluss-client (readiness probe)
LOG4J_JARS=(log4j-slf4j-impl log4j-core log4j-api)

die() { echo "fluss-cluster: $*" >&2; exit 1; }
say() { echo "fluss-cluster: $*" >&2; }

[[ "$N" =~ ^[1-3]$ ]] || die "FLUSS_TABLET_SERVERS must be 1..3 (got '$N')"

# ---------------------------------------------------------------------------- fetch
mvn_copy() { # groupId:artifactId:version destdir
  local gav=$1 dest=$2 a file
  a="$(cut -d: -f2 <<<"$gav")"; file="$dest/$a-$(cut -d: -f3 <<<"$gav").jar"
  [[ -s "$file" ]] && return 0
  mkdir -p "$dest"
  say "downloading $gav"
  local out; out="$(mktemp)"
  if ! mvn -B -q -Dstyle.color=never "$MVN_DEP_PLUGIN:copy" -Dartifact="$gav:jar" \
      -DoutputDirectory="$dest" -Dmdep.overWriteReleases=false > "$out" 2>&1; then
    cat "$out" >&2; rm -f "$out"; die "mvn could not fetch $gav"
  fi
  rm -f "$out"
  [[ -s "$file" ]] || die "expected $file after fetching $gav"
}

# A -SNAPSHOT version is not on Maven Central: its jars come from SNAP_DIR (read-only,
# e.g. shared/ beside the clone), whose README.md lists "| <jar> | <sha256> |". Each jar
# is verified after the copy into the cache (copied to a temporary name and renamed, so a
# concurrent start never sees half a jar).
snapshot_sha() { # jar-name -> sha256 from $SNAP_DIR/README.md
  awk -F'|' -v j="$1" '{gsub(/[ `]/, "", $2); gsub(/[ `]/, "", $3)} $2 == j && $3 ~ /^[0-9a-f]+$/ && length($3) == 64 {print $3; exit}' \
    "$SNAP_DIR/README.md"
}

snapshot_copy() { # jar-name destdir
  local jar=$1 dest=$2 want have src="$SNAP_DIR/$1"
  [[ -s "$dest/$jar" ]] && return 0
  [[ -s "$src" ]] || die "$jar not found in $SNAP_DIR (set FLUSS_SNAPSHOT_DIR to the directory with the $V jars)"
  [[ -r "$SNAP_DIR/README.md" ]] || die "$SNAP_DIR/README.md (with the jars' sha256) not found"
  want="$(snapshot_sha "$jar")"
  [[ -n "$want" ]] || die "no sha256 for $jar in $SNAP_DIR/README.md"
  mkdir -p "$dest"
  say "copying $jar from $SNAP_DIR"
  cp "$src" "$dest/.$jar.tmp.$$"
  have="$(sha256sum "$dest/.$jar.tmp.$$" | cut -d' ' -f1)"
  if [[ "$have" != "$want" ]]; then
    rm -f "$dest/.$jar.tmp.$$"
    die "sha256 of $src is $have, $SNAP_DIR/README.md says $want"
  fi
  mv -f "$dest/.$jar.tmp.$$" "$dest/$jar"
}

fetch() {
  command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
  if [[ "$V" == *-SNAPSHOT ]]; then
    snapshot_copy "fluss-server-$V.jar" "$LIB"
    snapshot_copy "fluss-client-$V.jar" "$CLIENT"
  else
    mvn_copy "org.apache.fluss:fluss-server:$V" "$LIB"
    mvn_copy "org.apache.fluss:fluss-client:$V" "$CLIENT"
  fi
  local j; for j in "${LOG4J_JARS[@]}"; do mvn_copy "org.apache.logging.log4j:$j:$LOG4J" "$LIB"; done
  say "jars in $HOME_DIR/$V: $(cd "$HOME_DIR/$V" && ls lib client | grep -c '\.jar$') ok"
}

have_jars() {
  [[ -s "$LIB/fluss-server-$V.jar" && -s "$CLIENT/fluss-client-$V.jar" ]] || return 1
  local j; for j in "${LOG4J_JARS[@]}"; do [[ -s "$LIB/$j-$LOG4J.jar" ]] || return 1; done
}

log4j_cp() { local j cp=""; for j in "${LOG4J_JARS[@]}"; do cp+="$LIB/$j-$LOG4J.jar:"; done; echo "${cp%:}"; }
server_cp() { echo "$(log4j_cp):$LIB/fluss-server-$V.jar"; }   # fluss-server last, like bin/config.sh

# ---------------------------------------------------------------------------- config
# Fluss reads server.yaml with a line parser: flat "key: value" lines, split at the first
# ": ", '#' starts a comment anywhere. Keep values free of '#' and ': '.
common_conf() {
  cat <<EOF
zookeeper.address: $HOST:$ZK_PORT
zookeeper.path.root: /fluss
zookeeper.client.session-timeout: 10 s
zookeeper.client.connection-timeout: 10 s
remote.data.dir: $STATE/data/remote
internal.listener.name: INTERNAL
security.protocol.map: SASL_CLIENT:sasl
security.sasl.enabled.mechanisms: PLAIN
security.sasl.plain.jaas.config: org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";
super.users: User:admin
authorizer.enabled: $([[ "$AUTHZ" == 1 ]] && echo true || echo false)
server.data-disk.write-limit-ratio: 1.0
EOF
}

# FLUSS_EXTRA_CONF, then FLUSS_EXTRA_CONF_FILE, appended last: a later line wins in
# Fluss's parser, so they override the lines above.
extra_conf() {
  if [[ -n "$EXTRA_CONF" ]]; then printf '%s\n' "$EXTRA_CONF"; fi
  if [[ -n "$EXTRA_CONF_FILE" ]]; then cat "$EXTRA_CONF_FILE"; echo; fi
}

write_configs() {
  rm -rf "$STATE"
  mkdir -p "$STATE"/{conf/cs,data/zk,data/remote,log,run,tmp,plugins}
  cat > "$STATE/conf/log4j2.properties" <<'EOF'
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = File
appender.file.name = File
appender.file.type = File
appender.file.append = true
appender.file.fileName = ${sys:log.file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-40c{1.} [%t] - %m%n
EOF
  cat > "$STATE/conf/log4j2-probe.properties" <<'EOF'
rootLogger.level = ERROR
rootLogger.appenderRef.err.ref = Err
appender.err.name = Err
appender.err.type = Console
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %-5p %c{1} - %m%n
EOF
  printf '%s\n' "tickTime=2000" "dataDir=$STATE/data/zk" "clientPort=$ZK_PORT" \
    "clientPortAddress=$HOST" "maxClientCnxns=0" "admin.enableServer=false" \
    "4lw.commands.whitelist=srvr,ruok" > "$STATE/conf/zoo.cfg"
  { common_conf
    echo "bind.listeners: INTERNAL://$HOST:0, CLIENT://$HOST:$PORT, SASL_CLIENT://$HOST:$SASL_PORT"
    echo "default.bucket.number: 1"
    echo "default.replication.factor: $RF"
    extra_conf
  } > "$STATE/conf/cs/server.yaml"
  local i
  for ((i = 0; i < N; i++)); do
    mkdir -p "$STATE/conf/ts$i" "$STATE/data/ts$i"
    { common_conf
      echo "bind.listeners: INTERNAL://$HOST:0, CLIENT://$HOST:0, SASL_CLIENT://$HOST:0"
      echo "tablet-server.id: $i"
      echo "data.dir: $STATE/data/ts$i"
      echo "kv.snapshot.interval: 0s"
      echo "kv.rocksdb.writebuffer.size: 8 mb"
      echo "kv.rocksdb.writebuffer.count: 2"
      echo "server.buffer.memory-size: 128 mb"
      extra_conf
    } > "$STATE/conf/ts$i/server.yaml"
  done
}

# ---------------------------------------------------------------------------- processes
pid_of() { local f="$STATE/run/$1.pid"; [[ -s $f ]] && cat "$f" || true; }
# A process counts as alive unless gone or a zombie (state Z/X in /proc/<pid>/stat).
pid_alive() { local st; st="$(cut -d')' -f2 "/proc/$1/stat" 2>/dev/null | awk '{print $1}')"; [[ -n $st && $st != Z && $st != X ]]; }
alive() { local p; p="$(pid_of "$1")"; [[ -n $p ]] && pid_alive "$p"; }
names() { local f; for f in "$STATE"/run/{zk,cs,ts*}.pid; do [[ -e $f ]] && basename "$f" .pid; done; true; }
# Our JVMs carry -Dfluss.local.state=<state dir>: find them even if pid files are lost.
marked_pids() { { ps -C java -o pid=,args= || true; } | awk -v m="-Dfluss.local.state=$STATE " 'index($0" ", m) {print $1}'; }

launch() { # name heap main-class args...
  local name=$1 heap=$2 main=$3; shift 3
  FLUSS_PLUGINS_DIR="$STATE/plugins" nohup "$JAVA" -Xms64m "-Xmx$heap" -XX:+ExitOnOutOfMemoryError \
    --add-opens=java.base/java.nio=ALL-UNNAMED \
    -Djava.io.tmpdir="$STATE/tmp" -Dfluss.local.state="$STATE" \
    -Dlog.file="$STATE/log/$name.log" -Dlog4j.configurationFile="file:$STATE/conf/log4j2.properties" \
    -cp "$(server_cp)" "$main" "$@" > "$STATE/log/$name.out" 2>&1 < /dev/null &
  echo $! > "$STATE/run/$name.pid"
}

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

show_logs() {
  local f
  for f in "$STATE"/log/*.log "$STATE"/log/*.out; do
    [[ -s $f ]] || continue
    echo "----- tail $f" >&2; tail -n 40 "$f" >&2
  done
}

wait_port() { # name port seconds
  local t
  for ((t = 0; t < $3 * 5; t++)); do
    port_open "$2" && return 0
    alive "$1" || { say "$1 died during start-up"; show_logs; return 1; }
    sleep 0.2
  done
  say "timeout waiting for $1 on port $2"; show_logs; return 1
}

probe() { # tablet-server-count timeout-seconds
  local pids=() n
  for n in $(names); do pids+=("$(pid_of "$n")"); done
  # Listing server nodes needs no ACL, so both listeners work with the authorizer on too.
  local checks=(--check "$HOST:$PORT" --check "$HOST:$SASL_PORT,admin,admin-secret")
  "$JAVA" --add-opens=java.base/java.nio=ALL-UNNAMED -Djava.io.tmpdir="$STATE/tmp" \
    -Dlog4j.configurationFile="file:$STATE/conf/log4j2-probe.properties" \
    -cp "$CLIENT/fluss-client-$V.jar:$(log4j_cp)" "$HERE/FlussReady.java" \
    --tablet-servers "$1" --timeout-s "$2" --pids "$(IFS=,; echo "${pids[*]}")" "${checks[@]}" >&2
}

print_addresses() {
  echo "FLUSS_BOOTSTRAP=$HOST:$PORT"
  echo "FLUSS_SASL_BOOTSTRAP=$HOST:$SASL_PORT"
  echo "FLUSS_ZK=$HOST:$ZK_PORT"
}

stop_one() { # name seconds-before-KILL
  local name=$1 pid t
  pid="$(pid_of "$name")"
  if [[ -n $pid ]] && pid_alive "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((t = 0; t < $2 * 5; t++)); do pid_alive "$pid" || break; sleep 0.2; done
    if pid_alive "$pid"; then say "$name ($pid) ignored TERM, killing"; kill -KILL "$pid" 2>/dev/null || true; fi
    for ((t = 0; t < 50; t++)); do pid_alive "$pid" || break; sleep 0.1; done
  fi
  rm -f "$STATE/run/$name.pid"
}

stop() {
  local n p left
  if [[ -d "$STATE/run" ]]; then
    # TERM all tablet servers at once (each does a controlled shutdown), then wait for each.
    for n in $(names); do [[ $n == ts* ]] && alive "$n" && kill -TERM "$(pid_of "$n")" 2>/dev/null; done
    for n in $(names); do if [[ $n == ts* ]]; then stop_one "$n" 30; fi; done
    stop_one cs 30
    stop_one zk 15
  fi
  for p in $(marked_pids); do   # stragglers whose pid file was lost
    say "killing leftover process $p"; kill -KILL "$p" 2>/dev/null || true
  done
  sleep 0.2
  left="$(marked_pids)"
  [[ -z $left ]] || die "processes still running: $left"
  if [[ "${FLUSS_KEEP_STATE:-0}" == 1 ]]; then say "stopped; state kept in $STATE"
  else rm -rf "$STATE"; say "stopped; state removed"; fi
}

start() {
  local n running=0 total=0 t0
  for n in $(names); do total=$((total + 1)); alive "$n" && running=$((running + 1)); done
  if ((total > 0 && running == total)); then
    say "already running ($running processes, state $STATE)"
    print_addresses; return 0
  fi
  if ((total > 0)) || [[ -n "$(marked_pids)" ]]; then
    say "found a partly running cluster, stopping it first"; FLUSS_KEEP_STATE=0 stop
  fi
  if [[ -n "$EXTRA_CONF_FILE" && ! -r "$EXTRA_CONF_FILE" ]]; then die "FLUSS_EXTRA_CONF_FILE $EXTRA_CONF_FILE is not readable"; fi
  have_jars || fetch
  local p; for p in "$ZK_PORT" "$PORT" "$SASL_PORT"; do
    port_open "$p" && die "port $p on $HOST is already in use (set FLUSS_ZK_PORT/FLUSS_PORT/FLUSS_SASL_PORT)"
  done
  t0=$(date +%s%N)
  write_configs
  launch zk "$ZK_HEAP" org.apache.fluss.shaded.zookeeper3.org.apache.zookeeper.server.quorum.QuorumPeerMain "$STATE/conf/zoo.cfg"
  wait_port zk "$ZK_PORT" 60 || { FLUSS_KEEP_STATE=1 stop >/dev/null 2>&1 || true; die "ZooKeeper did not start"; }
  launch cs "$CS_HEAP" org.apache.fluss.server.coordinator.CoordinatorServer --configDir "$STATE/conf/cs"
  local i
  for ((i = 0; i < N; i++)); do
    launch "ts$i" "$TS_HEAP" org.apache.fluss.server.tablet.TabletServer --configDir "$STATE/conf/ts$i"
  done
  wait_port cs "$PORT" 60 || { FLUSS_KEEP_STATE=1 stop >/dev/null 2>&1 || true; die "coordinator did not start (logs in $STATE/log)"; }
  if ! probe "$N" "$TIMEOUT"; then
    show_logs
    FLUSS_KEEP_STATE=1 stop >/dev/null 2>&1 || true
    die "cluster not ready (timeout ${TIMEOUT}s or a process died; logs kept in $STATE/log)"
  fi
  local ms=$((($(date +%s%N) - t0) / 1000000))
  say "ready: zookeeper, coordinator, $N tablet server(s) in $((ms / 1000)).$(printf '%03d' $((ms % 1000)))s"
  print_addresses
}

status() {
  local n any=0
  for n in $(names); do
    any=1
    if alive "$n"; then
      printf '%-4s pid %-8s running  rss %s kB\n' "$n" "$(pid_of "$n")" "$(ps -o rss= -p "$(pid_of "$n")" | tr -d ' ')"
    else
      printf '%-4s pid %-8s DEAD\n' "$n" "$(pid_of "$n")"
    fi
  done
  if ((any == 0)); then echo "FLUSS_STATUS=stopped"; return 3; fi
  for n in $(names); do alive "$n" || { echo "FLUSS_STATUS=degraded"; print_addresses; return 1; }; done
  echo "FLUSS_STATUS=running"
  print_addresses
}

case "${1:-}" in
  fetch) fetch ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 fetch|start|stop|status" >&2; exit 2 ;;
esac
