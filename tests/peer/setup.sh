#!/usr/bin/env bash
# Creates the peer client's virtualenv (idempotent) and prints its python:
#   PEER_PYTHON=<repo>/.cache/peer-venv/bin/python
# env: PEER_VENV (default <repo>/.cache/peer-venv), PYTHON (default python3)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="${PEER_VENV:-$REPO/.cache/peer-venv}"
PY="${PYTHON:-python3}"
REQ="$HERE/requirements.txt"
STAMP="$VENV/.requirements.sha256"
want="$(sha256sum "$REQ" | cut -d' ' -f1)"

if [[ -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]] &&
   "$VENV/bin/python" -c 'import fluss, pyarrow' 2>/dev/null; then
  echo "PEER_PYTHON=$VENV/bin/python"; exit 0
fi

if [[ ! -x "$VENV/bin/python" ]]; then
  rm -rf "$VENV"
  if ! "$PY" -m venv "$VENV" >&2; then
    echo "setup.sh: '$PY -m venv' failed; on Debian/Ubuntu: apt-get install -y python3-venv" >&2
    exit 1
  fi
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQ" >&2
"$VENV/bin/python" -c 'import fluss, pyarrow' >&2
echo "$want" > "$STAMP"
echo "PEER_PYTHON=$VENV/bin/python"
