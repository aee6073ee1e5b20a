#!/usr/bin/env bash
# Runs a command as on a machine with no database, Redis, PHP or test
# servers, to time and check the fast loop (docs/DEVELOPMENT.md):
#
#   scripts/without-servers.sh go test -count=1 ./...
#
# As root (namespaces): a network namespace of its own with only loopback
# up (the machine's MariaDB, PostgreSQL and Redis are not there), the
# server programs (PHP, Redis, beanstalkd, Chromium, Jaeger, and MariaDB's
# and PostgreSQL's, which tests start private servers from) bind-mounted
# over by /dev/null (not executable, so exec.LookPath does not find them), .cache (fauxqs, Jaeger, supervisor)
# hidden under an empty tmpfs, and the variables naming test servers unset.
# Nothing outside the namespaces changes.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
exec unshare -n -m bash -c '
set -euo pipefail
repo=$1; shift
ip link set lo up
for b in php redis-server redis-cli beanstalkd chromium jaeger mariadbd mysqld /usr/sbin/mariadbd /usr/sbin/mysqld /usr/lib/postgresql/*/bin/postgres /usr/lib/postgresql/*/bin/initdb; do
  if p=$(command -v "$b"); then mount --bind /dev/null "$p"; fi
done
mkdir -p "$repo/.cache" && mount -t tmpfs none "$repo/.cache"
unset LARAWORKER_SQS_SERVER LARAWORKER_JAEGER LARAWORKER_E2E LARAWORKER_TEST_REQUIRE_DB LARAWORKER_SUPERVISOR_PY
cd "$repo" && exec "$@"' bash "$repo" "$@"
