#!/bin/sh
# Instructions per job, counted by valgrind's callgrind: a measure of CPU
# per job that a busy machine does not disturb (docs/PERFORMANCE.md,
# "Against asynq"). Run from cmd/asynqbench; JOBS (default 4000) per drain.
#
# The worker process: each library drains alone under callgrind, which
# dumps its counters when a drain starts and when it ends
# (main.drainStarts, main.drainEnded), so the second dump holds exactly
# one drain. Go's asynchronous preemption signals upset callgrind, hence
# GODEBUG; callgrind may abort at exit, after its dumps.
#
# redis-server: asynqbench runs it under callgrind and switches its
# instrumentation on around each drain (-redis-callgrind), the PHP worker
# and the laraworker command included.
set -eu
jobs=${JOBS:-4000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/asynqbench" .
for c in 1 16 128; do
	for who in laraworker asynq; do
		GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$out/$who.c$c" \
			--dump-before=main.drainStarts --dump-before=main.drainEnded \
			"$out/asynqbench" -jobs "$jobs" -rounds 1 -only "$who" -concurrency "$c" >/dev/null 2>&1 || true
		ir=$(awk '/^totals:/ {print $2}' "$out/$who.c$c.2")
		echo "c$c $who worker process: $((ir / jobs)) instructions per job"
	done
done
"$out/asynqbench" -redis-callgrind -jobs "$jobs" -php-jobs "$jobs" -rounds 1 -concurrency 1,16,128 \
	-only laraworker,asynq,php,cli 2>/dev/null | grep instructions
