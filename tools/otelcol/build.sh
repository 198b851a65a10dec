#!/usr/bin/env bash
# Builds the OpenTelemetry Collector used by the telemetry tests (tests/otel)
# into .cache/otelcol/bin/otelcol-test.
#
#   bash tools/otelcol/build.sh            # build unless the cached binary is current
#   bash tools/otelcol/build.sh --force    # rebuild the binary from tools/otelcol/src
#   bash tools/otelcol/build.sh --regen    # regenerate src/ from manifest.yaml, then build
#
# tools/otelcol/src is its own Go module (src/go.mod), generated from
# manifest.yaml and kept in the tree, so an ordinary run is just `go build`;
# it is regenerated when manifest.yaml changes (src/manifest.sha256).
# Because of that nested go.mod, `go test ./...` and `go vet ./...` in the
# main module never descend into it.
#
# How the sources are generated (docs/otel-collector.md):
# the collector builder (ocb) only writes main.go/components.go
# (--skip-get-modules --skip-compilation); `go get` then resolves the modules.
# The builder's own `go mod tidy` step cannot be used: it wants a test-only
# dependency of the contrib fileexporter that the Go proxy does not serve.
#
# Cache: the binary is kept when it exists and the hash of manifest.yaml,
# src/go.mod, src/go.sum and the Go version equals the one recorded next to it.
# A cold build (empty module and build caches) takes about 4-5 minutes on two
# cores and needs ~1.2 GB of caches (measured here: 256 s, with the builder
# install and generation taking 28 s of it); with warm caches a rebuild is a
# relink of a few seconds.
set -euo pipefail

BUILDER_VERSION=v0.165.0
CORE_VERSION=v0.165.0   # go.opentelemetry.io/collector/* unstable modules
STABLE_VERSION=v1.71.0  # go.opentelemetry.io/collector/confmap/* providers
MODULE_PATH=github.com/fluss-gateway/fluss-gateway-go/tools/otelcol/src

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${OTELCOL_CACHE_DIR:-$root/.cache/otelcol}
bin=$cache/bin/otelcol-test
stamp=$bin.sha256
src=$here/src

force=0 regen=0
for arg in "$@"; do
	case $arg in
	--force) force=1 ;;
	--regen) regen=1 force=1 ;;
	-h | --help)
		awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
		exit 0
		;;
	*)
		echo "otelcol: unknown argument $arg" >&2
		exit 2
		;;
	esac
done

export GOWORK=off GOFLAGS=${GOFLAGS:--buildvcs=false}
log() { printf 'otelcol: %s\n' "$*" >&2; }

fingerprint() {
	{
		cat "$here/manifest.yaml"
		cat "$src/go.mod" "$src/go.sum" 2>/dev/null || true
		go env GOVERSION GOOS GOARCH
	} | sha256sum | cut -d' ' -f1
}

generate() {
	local started=$SECONDS
	local builder_bin=$cache/tools
	if [[ ! -x $builder_bin/builder ]]; then
		log "installing the collector builder $BUILDER_VERSION"
		mkdir -p "$builder_bin"
		GOBIN=$builder_bin go install "go.opentelemetry.io/collector/cmd/builder@$BUILDER_VERSION"
	fi
	log "generating $src from manifest.yaml"
	rm -rf "$src"
	(cd "$here" && "$builder_bin/builder" --config manifest.yaml --skip-get-modules --skip-compilation >&2)
	# Every `gomod:` line of the manifest, as module@version.
	local components
	mapfile -t components < <(sed -nE 's/^[[:space:]]*-[[:space:]]*gomod:[[:space:]]*([^[:space:]]+)[[:space:]]+([^[:space:]]+).*/\1@\2/p' "$here/manifest.yaml")
	(
		cd "$src"
		go mod init "$MODULE_PATH" >&2
		go get "go.opentelemetry.io/collector/otelcol@$CORE_VERSION" \
			"${components[@]}" \
			"go.opentelemetry.io/collector/confmap/provider/envprovider@$STABLE_VERSION" \
			"go.opentelemetry.io/collector/confmap/provider/fileprovider@$STABLE_VERSION" \
			"go.opentelemetry.io/collector/confmap/provider/httpprovider@$STABLE_VERSION" \
			"go.opentelemetry.io/collector/confmap/provider/httpsprovider@$STABLE_VERSION" \
			"go.opentelemetry.io/collector/confmap/provider/yamlprovider@$STABLE_VERSION"
		go get .
	)
	log "sources generated in $((SECONDS - started))s"
}

# src/manifest.sha256 records the manifest the sources were generated from.
manifest_hash=$(sha256sum "$here/manifest.yaml" | cut -d' ' -f1)
if [[ $regen == 1 || ! -f $src/go.mod || ! -f $src/components.go ||
	$(cat "$src/manifest.sha256" 2>/dev/null) != "$manifest_hash" ]]; then
	generate
	echo "$manifest_hash" >"$src/manifest.sha256"
fi

want=$(fingerprint)
if [[ $force == 0 && -x $bin && -f $stamp && $(cat "$stamp") == "$want" ]]; then
	log "up to date: $bin"
	echo "$bin"
	exit 0
fi

started=$SECONDS
log "building $bin (a cold build takes several minutes)"
mkdir -p "$(dirname "$bin")"
rm -f "$stamp"
(cd "$src" && go build -trimpath -ldflags='-s -w' -o "$bin.tmp" .)
mv -f "$bin.tmp" "$bin"
"$bin" components >/dev/null # the binary runs and lists its components
echo "$want" >"$stamp"
log "built in $((SECONDS - started))s"
echo "$bin"
