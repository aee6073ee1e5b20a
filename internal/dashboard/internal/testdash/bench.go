package testdash

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// The large tables of the dashboard's benchmarks (docs/PERFORMANCE.md,
// "Dashboard"), on MariaDB with LARAWORKER_BENCH_DASHBOARD=1: 1,000,000
// jobs (100,000 ready on two queues, 900,000 delayed on a third, 20
// reserved) and 100,000 failed jobs with Laravel 8 exception texts,
// built with MariaDB's sequence engine and kept between runs
// (LARAWORKER_BENCH_REBUILD=1 builds them again).

const (
	BenchJobs   = 1_000_000
	BenchReady  = 100_000
	BenchFailed = 100_000
)

// BenchQueue opens the benchmark's tables on the tests' MariaDB.
func BenchQueue(b *testing.B) *database.Queue {
	b.Helper()
	if os.Getenv("LARAWORKER_BENCH_DASHBOARD") == "" {
		b.Skip("set LARAWORKER_BENCH_DASHBOARD=1 to build 1,000,000 jobs and 100,000 failed jobs on MariaDB")
	}
	srv := testdsn.MySQL(b)
	sfx := os.Getenv("LARAWORKER_TEST_DB_SUFFIX")
	cfg := appconfig.Config{Driver: appconfig.EngineMySQL, Host: srv.Host, Port: srv.Port, Socket: srv.Socket, Database: srv.Database,
		Username: srv.User, Password: appconfig.Secret(srv.Password), AppTimezone: "UTC", ConnectionName: "database",
		JobsTable: "dashbench_jobs" + sfx, FailedTable: "dashbench_failed_jobs" + sfx, BatchesTable: "dashbench_job_batches" + sfx,
		DefaultQueue: "default", RetryAfter: 90}
	ctx := context.Background()
	q, err := database.Open(ctx, cfg, database.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { q.Close() })
	var n int64
	_ = q.DB().QueryRow("select count(*) from " + q.Dialect().Quote(cfg.FailedTable)).Scan(&n)
	if n != BenchFailed || os.Getenv("LARAWORKER_BENCH_REBUILD") != "" {
		buildBenchTables(b, q)
	}
	return q
}

func buildBenchTables(b *testing.B, q *database.Queue) {
	b.Helper()
	start := time.Now()
	if err := q.DropTables(context.Background()); err != nil {
		b.Fatal(err)
	}
	if err := q.CreateTables(context.Background()); err != nil {
		b.Fatal(err)
	}
	noop := string(Fixture(b, "noop", ""))
	exc, err := os.ReadFile(filepath.Join(Root(), "testdata", "payloads", "failed-throws.exception.txt"))
	if err != nil {
		b.Fatal(err)
	}
	// Classes App\Jobs\Jo00000 .. Jo00006: the same length as NoopJob,
	// so the serialized command stays valid.
	payload := fmt.Sprintf("replace(%s, 'NoopJob', concat('Jo', lpad(seq %% 7, 5, '0')))", sqlString(noop))
	stmts := []string{
		fmt.Sprintf(`insert into {jobs} (queue, payload, attempts, reserved_at, available_at, created_at)
			select case when seq > %d then 'later' when seq %% 4 = 0 then 'high' else 'default' end, %s, 0, null,
			unix_timestamp() + if(seq > %d, 86400, -60), unix_timestamp() - 60 from seq_1_to_%d`,
			BenchReady, payload, BenchReady, BenchJobs),
		`update {jobs} set reserved_at = unix_timestamp(), attempts = 1 where id <= 20`,
		fmt.Sprintf(`insert into {failed} (uuid, connection, queue, payload, exception, failed_at)
			select uuid(), 'database', if(seq %% 3 = 0, 'high', 'default'), %s, %s, now() - interval seq second from seq_1_to_%d`,
			payload, sqlString(string(exc)), BenchFailed),
	}
	for _, s := range stmts {
		Exec(b, q, s)
	}
	b.Logf("built the benchmark tables in %s", time.Since(start).Round(time.Second))
}

func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

// RSS is the process's resident set size in bytes (Linux).
func RSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, res int64
	fmt.Sscan(string(b), &size, &res)
	return res * int64(os.Getpagesize())
}
