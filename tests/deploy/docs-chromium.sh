#!/usr/bin/env bash
# Loads the API reference page GET /docs in headless Chromium and checks that
# Swagger UI rendered every operation of the served OpenAPI document: each
# operationId of /v1/openapi.json must appear in the page's DOM after the
# scripts ran, and Chromium must report no Content-Security-Policy refusal.
# Also writes a screenshot (default bin/docs-screenshot.png).
#
#   bash tests/deploy/docs-chromium.sh [GATEWAY_BINARY]
#
# The gateway runs with the in-memory backend on a free loopback port; no
# Fluss cluster is needed. Chromium comes from the Debian package (installed
# when missing and running as root).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$root/tests/deploy/lib.sh"
bin=${1:-}
shot=${DOCS_SCREENSHOT:-$root/bin/docs-screenshot.png}
work=$(mktemp -d)
pid=
cleanup() {
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

if ! ensure_apt_tool chromium chromium; then
	echo "docs-chromium: FAIL: chromium is not installed and cannot be installed here" >&2
	exit 1
fi
if [[ -z $bin ]]; then
	bin=$work/fluss-gateway
	(cd "$root" && go build -o "$bin" ./bootstrap/cmd/gateway)
fi
port=$(free_port)
mport=$(free_port)
cat >"$work/gateway.yaml" <<YAML
gateway.rest.listen: 127.0.0.1:$port
gateway.metrics.exporter.prometheus.listen: 127.0.0.1:$mport
gateway.rest.docs.enabled: true
gateway.cluster.default.backend: memory
YAML
"$bin" --config "$work/gateway.yaml" >"$work/gateway.log" 2>&1 &
pid=$!
wait_http "http://127.0.0.1:$port/ready" 30 || { cat "$work/gateway.log" >&2; exit 1; }

url=http://127.0.0.1:$port/docs
chrome=(chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile"
	--enable-logging=stderr --v=0 --virtual-time-budget=15000 --window-size=1280,1600)
timeout 120 "${chrome[@]}" --dump-dom "$url" >"$work/dom.html" 2>"$work/chrome.log"
mkdir -p "$(dirname "$shot")"
timeout 120 "${chrome[@]}" --screenshot="$shot" "$url" >/dev/null 2>>"$work/chrome.log"

curl -s "http://127.0.0.1:$port/v1/openapi.json" >"$work/openapi.json"
python3 - "$work/openapi.json" "$work/dom.html" "$work/chrome.log" "$shot" <<'PY'
import json, re, sys, html
doc = json.load(open(sys.argv[1]))
dom = open(sys.argv[2], encoding="utf-8").read()
log = open(sys.argv[3], encoding="utf-8", errors="replace").read()
ops = [op["operationId"] for p in doc["paths"].values() for m, op in p.items() if isinstance(op, dict) and "operationId" in op]
# Swagger UI lists each operation as an opblock whose summary shows the
# operationId (displayOperationId) and the path.
shown = set(re.findall(r'class="opblock-summary-operation-id"[^>]*>([^<]+)<', dom))
missing = [o for o in ops if o not in shown]
paths = set(html.unescape(p) for p in re.findall(r'data-path="([^"]+)"', dom))
missing_paths = [p for p in doc["paths"] if p not in paths]
csp = [l for l in log.splitlines() if "Content Security Policy" in l or "Refused to" in l]
title = re.search(r'class="title">([^<]+)', dom)
print(f"docs-chromium: {len(ops)} operations in the document, {len(shown)} shown; title {title.group(1).strip() if title else None!r}")
ok = True
if missing:
    print("docs-chromium: FAIL: operations not rendered:", ", ".join(missing)); ok = False
if missing_paths:
    print("docs-chromium: FAIL: paths not rendered:", ", ".join(missing_paths)); ok = False
if csp:
    print("docs-chromium: FAIL: CSP refusals:\n  " + "\n  ".join(csp)); ok = False
png = open(sys.argv[4], "rb").read()
if png[:8] != b"\x89PNG\r\n\x1a\n" or len(png) < 10000:
    print("docs-chromium: FAIL: no usable screenshot"); ok = False
print(f"docs-chromium: screenshot {sys.argv[4]} ({len(png)} bytes)")
sys.exit(0 if ok else 1)
PY
echo "docs-chromium: ok"
