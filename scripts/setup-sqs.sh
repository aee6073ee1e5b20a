#!/usr/bin/env bash
# Installs the SQS server the SQS tests run against: fauxqs 2.4.1 from
# npm, an SQS emulator that speaks SQS's JSON protocol (what the Go SDK
# uses), with AWS's receive counts, visibility changes, batches, long
# polling and FIFO queues (docs/SQS.md, "Which server"). It needs Node >=
# 22.5; Debian's Node is older, so Node 24 comes from npm too (the package
# "node", which installs this platform's binary from npm). Both go under
# .cache; nothing is installed system-wide.
#
# Idempotent: installs once (a minute), then only prints. Prints the
# command that starts a server on a loopback port (127.0.0.1 only, in
# memory, until killed); the tests start one per test package on a free
# port of their own (internal/testutil/testsqs):
#
#   $(scripts/setup-sqs.sh) 4566
set -euo pipefail
cd "$(dirname "$0")/.."

version=2.4.1
node_version=24
dest="$PWD/.cache/fauxqs-$version"
launcher="$dest/fauxqs"
if [ -x "$launcher" ] && "$launcher" --version-check >/dev/null 2>&1; then
  echo "$launcher"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "setup-sqs: npm is needed (apt-get install npm)" >&2
  exit 1
fi
mkdir -p "$dest"
[ -f "$dest/package.json" ] || echo '{"private":true}' >"$dest/package.json"
echo "setup-sqs: installing fauxqs $version and Node $node_version from npm into $dest (once)" >&2
npm install --prefix "$dest" --no-audit --no-fund --loglevel=error "node@$node_version" "fauxqs@$version" >&2

# fauxqs's own CLI listens on every interface and logs every request:
# serve.mjs builds the same app and listens on 127.0.0.1 only, quietly.
cat >"$dest/serve.mjs" <<'EOF'
import { buildApp } from "./node_modules/fauxqs/dist/app.js";
const port = parseInt(process.argv[2] ?? "4566", 10);
const app = buildApp({ logger: false });
const address = await app.listen({ port, host: "127.0.0.1" });
console.log(`fauxqs listening at ${address}`);
EOF

# The launcher runs serve.mjs with npm's Node. --version-check is the
# launcher's own: it exits 0 when Node (>= 22) and fauxqs are both there.
cat >"$launcher.tmp" <<EOF
#!/bin/sh
# fauxqs $version on Node $node_version, as scripts/setup-sqs.sh installed them.
node="$dest/node_modules/node/bin/node"
if [ "\${1:-}" = "--version-check" ]; then
  [ -x "\$node" ] && [ -f "$dest/node_modules/fauxqs/dist/app.js" ] &&
    "\$node" -e 'process.exit(+process.versions.node.split(".")[0] >= 22 ? 0 : 1)'
  exit \$?
fi
exec "\$node" "$dest/serve.mjs" "\$@"
EOF
chmod +x "$launcher.tmp"
mv "$launcher.tmp" "$launcher"
if ! "$launcher" --version-check; then
  echo "setup-sqs: Node $node_version or fauxqs did not install under $dest" >&2
  exit 1
fi
echo "$launcher"
