#!/usr/bin/env bash
# Installs the headless browser the dashboard's browser tests drive
# (test/e2e/dashboard_test.go): Debian's `chromium` package. Idempotent; needs
# root only when the package is missing (it then runs apt-get).
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
echo "setup-browser: installing chromium" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium >/dev/null
