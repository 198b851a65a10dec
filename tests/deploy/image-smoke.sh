#!/usr/bin/env bash
# Smoke test of the OCI image archive from `make image`: runs the image
# against a real Fluss cluster and waits for GET /ready 200 and a catalog
# call that reaches the cluster (GET /v1/clusters/default/databases).
#
#   FLUSS_BOOTSTRAP=127.0.0.1:9123 bash tests/deploy/image-smoke.sh bin/fluss-gateway-<version>.tar
#
# With podman (Debian package) that can run containers here, the archive is
# loaded and run read-only with every capability dropped. Where podman cannot
# start containers (in unprivileged sandboxes crun's setrlimit is refused),
# the test does what the runtime would: it reads the archive's index,
# manifest and config, checks them (non-root numeric user, entrypoint,
# OCI annotations), unpacks the single layer and runs its entrypoint with the
# image's user (setpriv, when running as root) and arguments.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$root/tests/deploy/lib.sh"
archive=${1:?usage: image-smoke.sh IMAGE_ARCHIVE}
: "${FLUSS_BOOTSTRAP:?set FLUSS_BOOTSTRAP to a running Fluss cluster (bash deployments/local/fluss-cluster.sh start)}"
work=$(mktemp -d)
chmod 755 "$work"
pid= container=
cleanup() {
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	[[ -n $container ]] && podman rm -f "$container" >/dev/null 2>&1
	[[ -n ${ref:-} ]] && command -v podman >/dev/null 2>&1 && podman rmi -f "localhost/$ref" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT
say() { echo "image-smoke: $*"; }

port=$(free_port)
mport=$(free_port)
mkdir -p "$work/etc"
cat >"$work/etc/gateway.yaml" <<YAML
gateway.rest.listen: 127.0.0.1:$port
gateway.metrics.exporter.prometheus.listen: 127.0.0.1:$mport
gateway.cluster.default.bootstrap.servers: $FLUSS_BOOTSTRAP
YAML
chmod 644 "$work/etc/gateway.yaml"

# The image's metadata, as a runtime reads it.
mkdir -p "$work/oci"
tar -xf "$archive" -C "$work/oci"
eval "$(python3 - "$work/oci" <<'PY'
import json, os, shlex, sys
d = sys.argv[1]
blob = lambda dg: os.path.join(d, "blobs", *dg.split(":"))
idx = json.load(open(os.path.join(d, "index.json")))
assert len(idx["manifests"]) == 1, "one image in the archive"
ref = idx["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"]
man = json.load(open(blob(idx["manifests"][0]["digest"])))
cfg = json.load(open(blob(man["config"]["digest"])))
c = cfg["config"]
uid, gid = c["User"].split(":")
assert uid.isdigit() and gid.isdigit() and uid != "0", "numeric non-root user: " + c["User"]
for k in ("version", "revision", "source", "created"):
    assert man["annotations"].get("org.opencontainers.image." + k), "annotation " + k
    assert c["Labels"].get("org.opencontainers.image." + k) == man["annotations"]["org.opencontainers.image." + k], "label " + k
assert len(man["layers"]) == 1, "one layer on an empty base"
print("ref=" + shlex.quote(ref))
print("uid=%s gid=%s" % (uid, gid))
print("entrypoint=" + shlex.quote(c["Entrypoint"][0]))
print("layer=" + shlex.quote(blob(man["layers"][0]["digest"])))
print("version=" + shlex.quote(man["annotations"]["org.opencontainers.image.version"]))
PY
)"
say "image $ref (version $version), user $uid:$gid, entrypoint $entrypoint"

podman_works() {
	command -v podman >/dev/null 2>&1 || return 1
	podman load -q -i "$archive" >/dev/null 2>&1 || return 1
	container=h5-image-smoke-$$
	podman run -d --name "$container" --network host --read-only --cap-drop ALL \
		--security-opt no-new-privileges -v "$work/etc/gateway.yaml:/etc/fluss-gateway/gateway.yaml:ro" \
		"localhost/$ref" >/dev/null 2>"$work/podman.err" || return 1
	return 0
}

if podman_works; then
	say "running with podman"
	how=podman
else
	say "podman cannot run containers here ($(tail -1 "$work/podman.err" 2>/dev/null || echo 'not installed')); running the layer's entrypoint"
	[[ -n $container ]] && podman rm -f "$container" >/dev/null 2>&1
	container=
	mkdir -p "$work/rootfs"
	tar -xzf "$layer" -C "$work/rootfs"
	exe=$work/rootfs$entrypoint
	if command -v file >/dev/null 2>&1 && ! file "$exe" | grep -q 'statically linked'; then
		say "FAIL: $entrypoint is not a static binary: $(file "$exe")"
		exit 1
	fi
	run=("$exe" --config "$work/etc/gateway.yaml")
	if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null 2>&1; then
		chmod 755 "$work/rootfs" "$work/rootfs/usr" "$work/rootfs/usr/local" "$work/rootfs/usr/local/bin"
		run=(setpriv --reuid "$uid" --regid "$gid" --clear-groups --no-new-privs "${run[@]}")
	fi
	SSL_CERT_FILE=$work/rootfs/etc/ssl/certs/ca-certificates.crt "${run[@]}" >"$work/gateway.log" 2>&1 &
	pid=$!
	how=layer
fi

if ! wait_http "http://127.0.0.1:$port/ready" 60; then
	[[ -n $container ]] && podman logs "$container" >&2
	cat "$work/gateway.log" >&2 2>/dev/null || true
	exit 1
fi
code=$(curl -s -o "$work/dbs.json" -w '%{http_code}' "http://127.0.0.1:$port/v1/clusters/default/databases")
[[ $code == 200 ]] || { say "FAIL: databases answered $code: $(cat "$work/dbs.json")"; exit 1; }
families=$(curl -s "http://127.0.0.1:$mport/metrics" | grep -c '^# TYPE fluss_' || true)
((families > 0)) || { say "FAIL: no fluss_* families on the metrics listener"; exit 1; }
if [[ $how == layer ]]; then
	grep -q "\"version\":\"$version\"" "$work/gateway.log" || { say "FAIL: start log does not name version $version"; cat "$work/gateway.log"; exit 1; }
	if [[ ${run[0]} == setpriv ]]; then
		running_as=$(ps -o uid= -p "$pid" | tr -d ' ')
		[[ $running_as == "$uid" ]] || { say "FAIL: the gateway runs as uid $running_as, not $uid"; exit 1; }
		say "the entrypoint runs as uid $running_as"
	fi
fi
say "ok ($how): /ready 200, databases $(cat "$work/dbs.json"), $families fluss_* metric families"
