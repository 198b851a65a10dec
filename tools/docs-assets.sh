#!/usr/bin/env bash
# Refreshes the API reference page's third-party assets (GET /docs) in
# adapters/http/docsassets from the npm package swagger-ui-dist at a pinned
# version, checked against the tarball's recorded SHA-256. Only the files the
# page loads are kept, with the package's license, notice and the bundle's
# third-party license list; VERSION records what they came from.
#
#   bash tools/docs-assets.sh
#
# To move to another version: set VERSION and SHA256 (sha256sum of the
# tarball `npm pack swagger-ui-dist@<version>` writes), run this, check
# GET /docs (tests/deploy/docs-chromium.sh) and commit the result.
set -euo pipefail

VERSION=5.35.0
SHA256=1b8e891893404ea4c3558b6a87e2a3e494e7eedba41168c2ece5800a391a6ea6
FILES=(swagger-ui-bundle.js swagger-ui.css LICENSE NOTICE swagger-ui-bundle.js.LICENSE.txt)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest=$here/../adapters/http/docsassets
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack --silent "swagger-ui-dist@$VERSION" >/dev/null)
tarball=$tmp/swagger-ui-dist-$VERSION.tgz
got=$(sha256sum "$tarball" | cut -d' ' -f1)
if [[ $got != "$SHA256" ]]; then
	echo "docs-assets: swagger-ui-dist-$VERSION.tgz has SHA-256 $got, expected $SHA256" >&2
	exit 1
fi
tar -xzf "$tarball" -C "$tmp"
mkdir -p "$dest"
for f in "${FILES[@]}"; do
	install -m 0644 "$tmp/package/$f" "$dest/$f"
done
printf 'swagger-ui-dist %s (npm), tarball sha256 %s\nfiles: %s\n' "$VERSION" "$SHA256" "${FILES[*]}" >"$dest/VERSION"
echo "docs-assets: swagger-ui-dist $VERSION -> $dest"
