#!/usr/bin/env bash
# Compiles and runs ArrowGold.java against the Fluss 0.9.1 jars in the local
# Maven repository (~/.m2): the versions fluss-common 0.9.1-incubating
# depends on (zstd-jni 1.5.7-6, lz4-java 1.10.2, shaded Arrow 15.0.0).
# Usage: run.sh write <dir> | run.sh read <set> <file>...
# Regenerate the golden files with: run.sh write .. (from this directory).
set -euo pipefail
M2=${M2_REPO:-$HOME/.m2/repository}
CP=""
for jar in \
  org/apache/fluss/fluss-common/0.9.1-incubating/fluss-common-0.9.1-incubating.jar \
  org/apache/fluss/fluss-common/0.9.1-incubating/fluss-common-0.9.1-incubating-tests.jar \
  org/apache/fluss/fluss-shaded-arrow/15.0.0-1.0-incubating/fluss-shaded-arrow-15.0.0-1.0-incubating.jar \
  org/apache/fluss/fluss-shaded-guava/32.1.3-jre-1.0-incubating/fluss-shaded-guava-32.1.3-jre-1.0-incubating.jar \
  org/apache/fluss/fluss-shaded-jackson/2.15.3-1.0-incubating/fluss-shaded-jackson-2.15.3-1.0-incubating.jar \
  org/apache/fluss/fluss-shaded-netty/4.1.104.Final-1.0-incubating/fluss-shaded-netty-4.1.104.Final-1.0-incubating.jar \
  com/github/luben/zstd-jni/1.5.7-6/zstd-jni-1.5.7-6.jar \
  at/yawk/lz4/lz4-java/1.10.2/lz4-java-1.10.2.jar \
  org/slf4j/slf4j-api/1.7.36/slf4j-api-1.7.36.jar \
  org/apache/commons/commons-lang3/3.18.0/commons-lang3-3.18.0.jar; do
  [ -f "$M2/$jar" ] || { echo "missing $M2/$jar" >&2; exit 3; }
  CP="$CP:$M2/$jar"
done
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${ARROWGOLD_CLASSES:-$(mktemp -d)}
javac -nowarn -d "$OUT" -cp "$CP" "$HERE/ArrowGold.java" 2>&1 | grep -v "^Note:" >&2 || true
exec java --add-opens=java.base/java.nio=ALL-UNNAMED -cp "$OUT$CP" ArrowGold "$@"
