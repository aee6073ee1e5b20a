# The development entry points; `make` lists them. Each is a thin name for
# a command that also works without make (scripts/, go test).

.DEFAULT_GOAL := help
GO ?= go
FUZZTIME ?= 15s
# The throughput bench on MariaDB (docs/PERFORMANCE.md, "Rerun it"); e.g.
# BENCH_ARGS='--db sqlite --db-database /tmp/bench.sqlite' for SQLite.
BENCH_ARGS ?= --laravel-app testdata/laravel --db mysql --db-host 127.0.0.1 --db-port 3306 --db-database test --db-username root

.PHONY: help test-fast test lint fuzz bench

help: ## list the targets
	@awk 'BEGIN { FS = ":.*## " } /^[a-z-]+:.*## / { printf "  make %-10s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

test-fast: ## go test ./...: tests needing MariaDB, PostgreSQL, Redis or PHP skip when those are missing
	$(GO) test ./...

test: ## scripts/test: the whole suite CI runs (starts the servers, installs what is missing as root)
	scripts/test

lint: ## gofmt, go vet and staticcheck -checks all (scripts/lint.sh)
	scripts/lint.sh

fuzz: ## a short fuzz of every fuzz target, FUZZTIME each (scripts/fuzz.sh)
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

bench: ## laraworker bench against php artisan queue:work on MariaDB (BENCH_ARGS)
	$(GO) build -o laraworker .
	./laraworker bench $(BENCH_ARGS)
