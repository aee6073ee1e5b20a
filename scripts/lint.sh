#!/usr/bin/env bash
# gofmt, go vet and staticcheck (every check) on the whole module: what
# scripts/test checks first, without the servers it starts.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted"; exit 1; fi

echo "== go vet"
go vet ./...

echo "== staticcheck"
go tool staticcheck -checks all ./...
