#!/bin/sh
# Instructions per job of the worker process, counted by valgrind's
# callgrind: a measure of CPU per job that a busy machine does not disturb
# (docs/PERFORMANCE.md, "Against River"). Run from cmd/riverbench; JOBS
# (default 4000) per drain, DSN as -dsn; further arguments go to riverbench
# (e.g. -schema, -table, -analyze).
#
# Each library drains alone (-only) under callgrind, which dumps its
# counters when a drain starts and when it ends (main.drainStarts,
# main.drainEnded), so the second dump holds exactly one drain. Go's
# asynchronous preemption signals upset callgrind, hence asyncpreemptoff;
# valgrind 3.19 cannot run RDTSCP, which Go's runtime uses for its lock
# timings when the CPU has it, hence cpu.rdtscp=off (golang.org/x/sys/cpu
# warns that it does not know the name: harmless). GOMAXPROCS=1: valgrind
# runs one thread at a time anyway, and with more Ps the Go scheduler's
# spinning threads add instructions that depend on valgrind's thread
# switching, not on the library (4-7x the per-job count in both, unequally).
set -eu
jobs=${JOBS:-4000}
dsn=${DSN:-postgres://postgres@127.0.0.1:5432/test}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/riverbench" .
for c in ${CONCURRENCY:-1 16 128}; do
	for who in laraworker river; do
		GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off valgrind --tool=callgrind --callgrind-out-file="$out/$who.c$c" \
			--dump-before=main.drainStarts --dump-before=main.drainEnded \
			"$out/riverbench" -dsn "$dsn" -jobs "$jobs" -rounds 1 -only "$who" -concurrency "$c" "$@" >/dev/null 2>&1 || true
		ir=$(awk '/^totals:/ {print $2}' "$out/$who.c$c.2")
		echo "c$c $who: $((ir / jobs)) instructions per job (load $(cut -d' ' -f1 /proc/loadavg))"
	done
done
