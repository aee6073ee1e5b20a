#!/usr/bin/env bash
# Gets the tools the deploy-file tests need, without starting any service:
# systemd-analyze (package systemd) and supervisor's Python modules, which
# are unpacked from Debian's package into .cache/supervisor (installing the
# package would start a supervisord daemon). Prints the PYTHONPATH to use.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v systemd-analyze >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd >/dev/null
fi

dest=.cache/supervisor
if [ ! -d "$dest/usr/lib/python3/dist-packages/supervisor" ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download supervisor >/dev/null 2>&1) || { apt-get update -qq && (cd "$tmp" && apt-get download supervisor >/dev/null); }
  mkdir -p "$dest"
  dpkg -x "$tmp"/supervisor_*.deb "$dest"
  rm -rf "$tmp"
fi
echo "$PWD/$dest/usr/lib/python3/dist-packages"
