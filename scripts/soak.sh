#!/usr/bin/env bash
# Soak test: LARAWORKER_REL_LOAD_PROCS `laraworker work` processes (default
# 8, concurrency 8 each) and LARAWORKER_REL_LOAD_PHP `php artisan
# queue:work` (default 2) drain LARAWORKER_REL_LOAD_JOBS NoopJobs (default
# 50000) from one MariaDB queue (database laraworker_rel, a temp copy of
# testdata/laravel). Checks exactly-once and no failures, prints the
# throughput. Then the crash test (20 SIGKILLs) runs SOAK_CRASH_ROUNDS
# times (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
scripts/services.sh

export LARAWORKER_REL_LOAD_PROCS=${LARAWORKER_REL_LOAD_PROCS:-8}
export LARAWORKER_REL_LOAD_JOBS=${LARAWORKER_REL_LOAD_JOBS:-50000}
export LARAWORKER_REL_LOAD_PHP=${LARAWORKER_REL_LOAD_PHP:-2}
rounds=${SOAK_CRASH_ROUNDS:-3}

echo "== load: $LARAWORKER_REL_LOAD_PROCS Go + $LARAWORKER_REL_LOAD_PHP PHP workers, $LARAWORKER_REL_LOAD_JOBS jobs"
go test -count=1 -timeout 60m -v -run '^TestLoad$' ./test/reliability/ | grep -E '^(---|ok|FAIL|PASS)|load_test.go'

echo "== crash: $rounds rounds of 20 SIGKILLs during 5000 jobs"
go test -count="$rounds" -timeout 60m -v -run '^TestCrashesLoseNothing$' ./test/reliability/ | grep -E '^(---|ok|FAIL|PASS)|crash_test.go'
echo "== soak passed"
