#!/usr/bin/env bash
# Runs every Go fuzz target of the module for FUZZTIME each (default 20s),
# one at a time (go test -fuzz takes one target per run). Seed corpora run as
# ordinary tests in `make test`; this script explores beyond them.
#
#   bash tests/fuzz.sh                 # all targets, 20s each
#   FUZZTIME=2m bash tests/fuzz.sh wire # only packages whose path contains "wire"
#
# Extended campaign (not in CI; `make fuzz-campaign`): one worker per target
# (FUZZPARALLEL=1 leaves the other cores alone) and a floor on the total
# number of executions; the script fails when the targets together ran fewer
# than FUZZ_MIN_EXECS inputs:
#
#   FUZZTIME=35s FUZZPARALLEL=1 FUZZ_MIN_EXECS=10000000 bash tests/fuzz.sh
#
# At the end it prints one line per target with its executions and result,
# and the total.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-20s}
FUZZPARALLEL=${FUZZPARALLEL:-}
FUZZ_MIN_EXECS=${FUZZ_MIN_EXECS:-0}
filter=${1:-}
status=0
total=0
summary=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT
parallel=()
[[ -n "$FUZZPARALLEL" ]] && parallel=(-parallel "$FUZZPARALLEL")
while IFS=: read -r file _ decl; do
  name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]+).*/\1/' <<<"$decl")
  pkg="./$(dirname "$file")"
  [[ -n "$filter" && "$pkg" != *"$filter"* ]] && continue
  echo "==> $pkg $name ($FUZZTIME)"
  result=ok
  if ! go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 1s "${parallel[@]}" 2>&1 | tee "$log"; then
    result=FAIL
    status=1
  fi
  execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo 0)
  total=$((total + execs))
  summary+=("$(printf '%-48s %-28s %12d  %s' "$pkg" "$name" "$execs" "$result")")
done < <(grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]+\(' . | grep -v '^./tools/' | sed 's#^\./##')
echo
echo "fuzz summary (FUZZTIME=$FUZZTIME${FUZZPARALLEL:+, -parallel=$FUZZPARALLEL})"
printf '%s\n' "${summary[@]}"
echo "total executions: $total"
if (( total < FUZZ_MIN_EXECS )); then
  echo "fewer than FUZZ_MIN_EXECS=$FUZZ_MIN_EXECS executions" >&2
  status=1
fi
exit $status
