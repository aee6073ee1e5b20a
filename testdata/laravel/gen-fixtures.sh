#!/usr/bin/env bash
# Regenerates testdata/payloads/ from this app (Laravel 8.83 via Debian's
# php-laravel-framework) on a throw-away SQLite database.
#
#   testdata/laravel/gen-fixtures.sh [output dir]   (default: testdata/payloads)
#
# The app is copied to a fixed path first: stack traces in failed_jobs
# fixtures and closure file names then read the same on every machine.
# uuids, batch ids, timestamps and ciphertexts (random IVs) change on every run;
# everything else is reproducible.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/../payloads}"
work=/tmp/laraworker-fixtures

command -v php >/dev/null && [ -d /usr/share/php/Illuminate ] || {
    echo "gen-fixtures: PHP or Debian's php-laravel-framework is missing; run testdata/setup-php.sh first" >&2
    exit 1
}

rm -rf "$work"
mkdir -p "$work/app"
# Everything but local state: .env, SQLite files, logs, cached bootstrap files.
tar -C "$here" --exclude=./.env --exclude='./database/*.sqlite' --exclude='./storage/logs/*' \
    --exclude='./storage/framework/cache/data/*' --exclude='./bootstrap/cache/*.php' -cf - . | tar -C "$work/app" -xf -

mkdir -p "$out"
php "$work/app/gen-fixtures.php" "$work/app" "$out"
rm -rf "$work"
