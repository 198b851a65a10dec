#!/usr/bin/env bash
# Runs the peer CLI with the venv made by setup.sh:  tests/peer/peer.sh [global opts] CMD ...
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${PEER_VENV:-$(cd "$HERE/../.." && pwd)/.cache/peer-venv}"
[[ -x "$VENV/bin/python" ]] || { echo "peer venv missing: run tests/peer/setup.sh" >&2; exit 2; }
exec "$VENV/bin/python" "$HERE/fluss_peer.py" "$@"
