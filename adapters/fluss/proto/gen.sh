#!/usr/bin/env bash
# Regenerates fluss_api.pb.go from fluss_api.proto.
#
# Needs protoc (Debian: apt-get install protobuf-compiler) and protoc-gen-go at
# the version of google.golang.org/protobuf in go.mod:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WANT="v1.36.12"

command -v protoc >/dev/null || { echo "gen.sh: protoc not found (apt-get install protobuf-compiler)" >&2; exit 1; }
PLUGIN="$(command -v protoc-gen-go || true)"
[[ -n "$PLUGIN" ]] || PLUGIN="$(go env GOPATH)/bin/protoc-gen-go"
[[ -x "$PLUGIN" ]] || { echo "gen.sh: protoc-gen-go not found (go install google.golang.org/protobuf/cmd/protoc-gen-go@$WANT)" >&2; exit 1; }
HAVE="$("$PLUGIN" --version | awk '{print $2}')"
[[ "$HAVE" == "$WANT" ]] || { echo "gen.sh: protoc-gen-go is $HAVE, want $WANT" >&2; exit 1; }

cd "$HERE"
protoc --plugin=protoc-gen-go="$PLUGIN" -I . \
  --go_out=. --go_opt=paths=source_relative \
  fluss_api.proto
echo "gen.sh: wrote $HERE/fluss_api.pb.go" >&2
