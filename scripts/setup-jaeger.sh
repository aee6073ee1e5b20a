#!/usr/bin/env bash
# Builds Jaeger v1.75.0 (the OpenTelemetry Collector based `jaeger`
# binary: an OTLP receiver on gRPC and HTTP with an in-memory store and a
# query API), which the tracing tests start on ports of their own
# (internal/testutil/testjaeger). It comes from the Go module proxy as a program;
# `go install pkg@version` refuses it (its go.mod has replace
# directives), so it is built as a tool of a throwaway module under
# .cache. Idempotent: built once, a few minutes. Prints the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

version=v1.75.0
dest="$PWD/.cache/jaeger-$version"
if [ -x "$dest/jaeger" ]; then
  echo "$dest/jaeger"
  exit 0
fi
mod="$dest/module"
mkdir -p "$mod"
cd "$mod"
[ -f go.mod ] || go mod init laraworker.test/jaeger >/dev/null 2>&1
echo "setup-jaeger: building jaeger $version (once; a few minutes)" >&2
GOFLAGS=-mod=mod go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$version" >&2
go build -o "$dest/jaeger.tmp" github.com/jaegertracing/jaeger/cmd/jaeger >&2
mv "$dest/jaeger.tmp" "$dest/jaeger"
echo "$dest/jaeger"
