#!/usr/bin/env bash
# Runs every Go fuzz target of the module for FUZZTIME each (default 20s),
# one at a time (go test -fuzz takes one target per run). Seed corpora run as
# ordinary tests in `make test`; this script explores beyond them.
#
#   bash tests/fuzz.sh                 # all targets, 20s each
#   FUZZTIME=2m bash tests/fuzz.sh wire # only packages whose path contains "wire"
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-20s}
filter=${1:-}
status=0
while IFS=: read -r file _ decl; do
  name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]+).*/\1/' <<<"$decl")
  pkg="./$(dirname "$file")"
  [[ -n "$filter" && "$pkg" != *"$filter"* ]] && continue
  echo "==> $pkg $name ($FUZZTIME)"
  go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 1s || status=1
done < <(grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]+\(' . | grep -v '^./tools/' | sed 's#^\./##')
exit $status
