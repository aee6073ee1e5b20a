#!/usr/bin/env bash
# How many distinct functions (and files) of the module run for ONE plain
# no-op job, from the worker's claim to the job's delete, on the database
# store (SQLite) and on Redis (issue 34 item 4): test/bench/plainjob runs
# the job in a binary built with coverage, clears the counters while the
# job waits (delayed), and writes them once the job has left the store;
# `go tool covdata func` lists the functions, and those with a nonzero
# counter are counted (the measuring program's own are left out). Each
# store is measured twice: "first", the first job after the worker's
# start (its statements rendered then, its caches filled), and "next", a
# job after one has run (the path every later job takes).
#
#   scripts/plainjob-funcs.sh [sqlite|redis ...]   # default: both
#   REDIS_ADDR=127.0.0.1:6379 (the shared Redis: the run uses its own prefix)
#   VERBOSE=1 lists the functions.
#   MAX_FUNCS=n fails (exit 1) when a store's count is above n: the
#   ceiling test/bench/plainjob's TestPlainJobFunctions holds.
set -euo pipefail
cd "$(dirname "$0")/.."
stores=("$@")
[ ${#stores[@]} -gt 0 ] || stores=(sqlite redis)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mod=github.com/laraworker/laraworker
go build -cover -covermode=atomic -coverpkg="$mod/..." -o "$tmp/plainjob" ./test/bench/plainjob
for store in "${stores[@]}"; do
	for job in first next; do
		run="$tmp/$store-$job"
		mkdir -p "$run" "$tmp/exit"
		warm=false
		[ "$job" = next ] && warm=true
		GOCOVERDIR="$tmp/exit" "$tmp/plainjob" -store "$store" -warm="$warm" -redis "${REDIS_ADDR:-127.0.0.1:6379}" -out "$run"
		# lines: "<file>:<line>:<TAB>name<TABs>percent"; the last line is the total.
		go tool covdata func -i "$run" |
			grep -v "^total" | grep -v "/test/bench/plainjob/" |
			awk '$NF != "0.0%"' >"$run.run"
		funcs=$(wc -l <"$run.run")
		files=$(cut -d: -f1 "$run.run" | sort -u | wc -l)
		engine=$(grep -c "^$mod/worker/[^/]*:" "$run.run" || true)
		printf '%-6s %-5s job  functions %4d  files %3d  (package worker: %d functions)\n' "$store" "$job" "$funcs" "$files" "$engine"
		if [ -n "${VERBOSE:-}" ]; then
			sed "s|^$mod/||" "$run.run" | awk '{print "  " $1, $2}'
		fi
		if [ -n "${MAX_FUNCS:-}" ] && [ "$funcs" -gt "$MAX_FUNCS" ]; then
			echo "$store ($job job): $funcs functions, more than the ceiling of $MAX_FUNCS" >&2
			failed=1
		fi
	done
done
exit "${failed:-0}"
