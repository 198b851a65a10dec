#!/usr/bin/env bash
# make image: builds the static gateway binary and the OCI image archive
# bin/fluss-gateway-<version>.tar from it (tools/image/main.go), without a
# container engine.
#
#   bash tools/image/build.sh            # version: the chart's appVersion
#   PRINT_VERSION=1 bash tools/image/build.sh   # print that version only
#   VERSION=1.2.3 bash tools/image/build.sh
#
# Reproducible: the binary is built with -trimpath, no VCS stamping and an
# empty build id, and the image's every timestamp is the commit time
# (SOURCE_DATE_EPOCH overrides), so the same commit and toolchain give the
# same image digest. Prints the archive path, its size and the manifest
# digest; writes the digest to bin/fluss-gateway-<version>.tar.digest.
#
# Variables: VERSION, REVISION, SOURCE_DATE_EPOCH, IMAGE_SOURCE (the
# org.opencontainers.image.source label), GOARCH (amd64), CA_BUNDLE (a PEM
# file shipped as /etc/ssl/certs/ca-certificates.crt; default the build
# machine's Debian bundle when present, "none" for no bundle).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

# The version is the Helm chart's appVersion, so the image `make image`
# builds (fluss-gateway:<appVersion>) is the one the chart deploys by default
# (image.tag empty = appVersion); the commit goes into the revision label and
# the binary's Commit.
chart_version() { sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$root/deployments/helm/fluss-gateway/Chart.yaml"; }
VERSION=${VERSION:-$(chart_version)}
git_ok() { git -C "$root" rev-parse --git-dir >/dev/null 2>&1; }
if git_ok; then
	REVISION=${REVISION:-$(git rev-parse HEAD)}
	SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
fi
VERSION=${VERSION:-dev}
if [[ ${PRINT_VERSION:-0} == 1 ]]; then
	echo "$VERSION"
	exit 0
fi
REVISION=${REVISION:-}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-0}
IMAGE_SOURCE=${IMAGE_SOURCE:-https://github.com/fluss-gateway/fluss-gateway-go}
GOARCH=${GOARCH:-amd64}
CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
if [[ $CA_BUNDLE == none || ! -f $CA_BUNDLE ]]; then
	CA_BUNDLE=
fi

pkg=github.com/fluss-gateway/fluss-gateway-go/bootstrap
mkdir -p bin
binary=bin/fluss-gateway-linux-$GOARCH
CGO_ENABLED=0 GOOS=linux GOARCH=$GOARCH GOFLAGS= go build -trimpath -buildvcs=false \
	-ldflags "-s -w -buildid= -X $pkg.Version=$VERSION -X $pkg.Commit=$REVISION" \
	-o "$binary" ./bootstrap/cmd/gateway

out=bin/fluss-gateway-$VERSION.tar
(cd tools/image && GOWORK=off GOFLAGS= go build -trimpath -o "$root/bin/.image-tool" .)
report=$(bin/.image-tool -binary "$binary" -out "$out" -version "$VERSION" -revision "$REVISION" \
	-source "$IMAGE_SOURCE" -created "$SOURCE_DATE_EPOCH" -arch "$GOARCH" ${CA_BUNDLE:+-ca-bundle "$CA_BUNDLE"})
sed -n 's/.* manifest \(sha256:[0-9a-f]*\) .*/\1/p' <<<"$report" >"$out.digest"
echo "image: $out $(stat -c %s "$out") bytes, binary $(stat -c %s "$binary") bytes, digest $(cat "$out.digest")"
