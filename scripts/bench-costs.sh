#!/usr/bin/env bash
# The inputs of the cost model in docs/PERFORMANCE.md ("How cost grows: a
# model"), measured on this machine: per job, the worker's CPU, the server's
# CPU, the round trips, and what the server reads or runs, for 1, 2 and 4
# laraworker processes (each --concurrency 16) on MariaDB and PostgreSQL, and
# for the Redis store at c1, c16 and c128; then the jobs/s the model predicts
# for those processes beside the jobs/s measured.
#
#   scripts/bench-costs.sh                 # 20,000 jobs per drain, databases "test"
#   JOBS=5000 MYDB=test_x PGDB=test_x scripts/bench-costs.sh
#
# Counters: PostgreSQL's pg_stat_database of the bench database (rows
# returned + fetched, transactions; the database is the bench's alone);
# MariaDB's SHOW GLOBAL STATUS (Questions, Handler_read_*: the whole server,
# so other clients count too: run it on a quiet server); round trips per job
# counted in the store by `go test ./worker -bench Drain` (claims and grouped
# deletes per 1,000 jobs; its databases are the tests', named by
# LARAWORKER_TEST_DB_SUFFIX); Redis from test/asynqbench (INFO commandstats of
# its private redis-server, and the requests of laraworker's client).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-20000}
PROCS=${PROCS:-"1 2 4"}
MYDB=${MYDB:-test}
PGDB=${PGDB:-test}
CORES=$(nproc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/laraworker" .
(cd test/asynqbench && go build -o "$tmp/asynqbench" .)
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD), $CORES cores, uptime:$(uptime)"

mysql_args=(--db mysql --db-host 127.0.0.1 --db-port 3306 --db-database "$MYDB" --db-username root)
pgsql_args=(--db pgsql --db-host 127.0.0.1 --db-port 5432 --db-database "$PGDB" --db-username postgres)

# counters prints "statements rows" so far: statements are MariaDB's
# Questions and PostgreSQL's committed transactions, rows those read.
counters() {
	if [ "$1" = mysql ]; then
		mysql -h127.0.0.1 -uroot -N -e "show global status where variable_name in ('Questions','Handler_read_first','Handler_read_key','Handler_read_next','Handler_read_prev','Handler_read_rnd','Handler_read_rnd_next')" |
			awk '$1=="Questions"{q=$2} $1!="Questions"{r+=$2} END{print q, r}'
	else
		psql -h 127.0.0.1 -U postgres -d "$PGDB" -Atc "select pg_stat_clear_snapshot(); select xact_commit, tup_returned + tup_fetched from pg_stat_database where datname = current_database()" | tail -1 | tr '|' ' '
	fi
}

echo "engine processes jobs/s worker_cpu_ms/1k server_cpu_ms/1k statements/job rows_read/job predicted_jobs/s load"
for engine in mysql pgsql; do
	args_name="${engine}_args[@]"
	for p in $PROCS; do
		read -r s0 r0 < <(counters "$engine")
		"$tmp/laraworker" bench "${!args_name}" --only lw-c16 --jobs "$JOBS" --rounds 1 --latency-jobs 0 --processes "$p" --json 2>/dev/null |
			sed -n '/^{$/,$p' > "$tmp/bench.json"
		sleep 1 # PostgreSQL's backends report their counters within a second
		read -r s1 r1 < <(counters "$engine")
		jq -r --arg e "$engine" --arg p "$p" --argjson s "$((s1 - s0))" --argjson r "$((r1 - r0))" --argjson n "$JOBS" --argjson cores "$CORES" '
			.results["lw-c16"].drains[0] as $d
			| [$e, $p, ($d.jobs_per_sec|floor), ($d.cpu_ms_per_1k*10|round/10), ($d.server_cpu_ms_per_1k*10|round/10),
			   ($s/$n*100|round/100), ($r/$n*100|round/100),
			   ($cores*1000000/($d.cpu_ms_per_1k+$d.server_cpu_ms_per_1k)|floor), $d.load1] | @tsv' "$tmp/bench.json"
	done
done

echo "# round trips per job, counted in the store (claims + grouped deletes per 1,000 jobs)"
go test ./worker -run '^$' -bench 'Drain/(mysql|pgsql)/c(1|16|128)$' -benchtime "${JOBS}x" -count 1 2>&1 |
	awk '/^BenchmarkDrain/ {for (i = 1; i <= NF; i++) {if ($(i+1) == "jobs/s") j=$i; if ($(i+1) == "cpu-ms/1kjobs") c=$i; if ($(i+1) == "claims/1kjobs") cl=$i; if ($(i+1) == "deletes/1kjobs") d=$i}; print $1, j" jobs/s", c" cpu-ms/1k", cl" claims/1k", d" deletes/1k"}'

echo "# Redis (test/asynqbench, private redis-server): per job"
echo "c jobs/s worker_cpu_ms/1k redis_cpu_ms/1k redis_commands/job round_trips/job"
"$tmp/asynqbench" -only laraworker -jobs "$JOBS" -rounds 1 -json 2>/dev/null | sed -n '/^{$/,$p' |
	jq -r '.results[] | .laraworker[0] as $m | [.concurrency, ($m.jobs_per_sec|floor), ($m.cpu_ms_per_1k*10|round/10), ($m.redis_cpu_ms_per_1k*10|round/10), ($m.redis_commands_per_job*100|round/100), ($m.round_trips_per_job*1000|round/1000)] | @tsv'
echo "# uptime at the end:$(uptime)"
