package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// The backlog check passes on the backlog as pushed and fails once a row
// of it was reserved or deleted: the shared-php workload's proof that the
// Go worker left PHP's jobs alone.
func TestCheckBacklogSeesTouchedRows(t *testing.T) {
	testdb.ForEach(t, func(t *testing.T, q *database.Queue) {
		ctx := context.Background()
		php, err := newJobTemplateFor(phpOnlyClass)
		if err != nil {
			t.Fatal(err)
		}
		if err := pushTemplate(ctx, q, php, 30); err != nil {
			t.Fatal(err)
		}
		if err := checkBacklog(ctx, q, phpOnlyClass, 30); err != nil {
			t.Fatalf("untouched backlog: %v", err)
		}
		if err := checkBacklog(ctx, q, benchClass, 30); err == nil {
			t.Error("the backlog passed as jobs of another class")
		}
		d, table := q.Dialect(), quotedJobsTable(q)
		if _, err := q.DB().Exec(d.Rebind("update "+table+" set reserved_at = ?, attempts = 1 where id = (select min(id) from (select id from "+table+") t)"), 1); err != nil {
			t.Fatal(err)
		}
		if err := checkBacklog(ctx, q, phpOnlyClass, 30); err == nil || !strings.Contains(err.Error(), "1 of the 30") {
			t.Errorf("a reserved row: %v", err)
		}
		if _, err := q.DB().Exec("delete from " + table + " where reserved_at is not null"); err != nil {
			t.Fatal(err)
		}
		if err := checkBacklog(ctx, q, phpOnlyClass, 30); err == nil || !strings.Contains(err.Error(), "29 App") {
			t.Errorf("a deleted row: %v", err)
		}
	})
}

func quotedJobsTable(q *database.Queue) string { return q.Dialect().Quote(q.Config().JobsTable) }

// A recreated table has no planner statistics until ANALYZE, which the
// no-stats workload checks before each of its drains.
func TestFreshTableHasNoStatisticsUntilAnalyze(t *testing.T) {
	for _, engine := range []string{appconfig.EnginePgSQL, appconfig.EngineSQLite} {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			q := testdb.Open(t, testdb.Config(t, engine))
			jobs, err := newJobTemplate()
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range []string{"first", "again after an analysed one"} {
				if err := recreateWithoutStats(ctx, q); err != nil {
					t.Fatal(err)
				}
				if err := pushTemplate(ctx, q, jobs, 200); err != nil {
					t.Fatal(err)
				}
				if has, err := hasStatistics(ctx, q); err != nil || has {
					t.Fatalf("%s: fresh table with 200 rows has statistics: %v (%v)", step, has, err)
				}
				if err := analyzeTable(ctx, q); err != nil {
					t.Fatal(err)
				}
				if has, err := hasStatistics(ctx, q); err != nil || !has {
					t.Fatalf("%s: no statistics after ANALYZE (%v)", step, err)
				}
			}
		})
	}
}

// Every workload runs end to end at small sizes on each engine through
// the CLI: one round each, the ratios are there, the
// continuous window saw every job picked up (server CPU has its own
// test in internal/servercpu: a few hundred jobs are too few ticks), and the tables are gone.
func TestBenchWorkloadsOnEachEngine(t *testing.T) {
	t.Parallel() // waits on real time and child processes: beside the other waiting tests
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		cfg := testdb.Config(t, engine)
		q, err := database.Open(context.Background(), cfg, database.Options{})
		if err != nil {
			t.Skipf("%s not reachable: %v", engine, err)
		}
		defer q.Close()
		workloads := []string{wlSharedPHP, wlDelayed, wlContinuous}
		if engine != appconfig.EngineMySQL {
			workloads = append(workloads, wlNoStats)
		}
		args := append(append([]string{"bench"}, connectionArgs(cfg)...), "--workload", strings.Join(workloads, ","), "--rounds", "1", "--json",
			"--shared-jobs", "200", "--php-backlog", "1000", "--delayed-rows", "3000", "--ready-rows", "300", "--jobs", "300",
			"--rate", "50", "--duration", "2s", "--daemon-sleep", "50ms")
		out, stderr, code := runBinary(t, args...)
		if code != 0 {
			t.Fatalf("status %d\n%s\n%s", code, out, stderr)
		}
		var rep report
		if err := json.Unmarshal(jsonAfterTables(t, out), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Workloads) != len(workloads)-1 {
			t.Fatalf("workloads %+v, want %v", rep.Workloads, workloads)
		}
		for _, w := range rep.Workloads {
			r := w.Rounds
			if w.Contender != "lw-c128" || len(r) != 1 || r[0].Ratio <= 0 || r[0].Load.JobsPerSec <= 0 || r[0].Load.WallSec <= 0 {
				t.Errorf("%s: %+v", w.Workload, w)
			}
			if want := map[string]int{wlSharedPHP: 200, wlDelayed: 300, wlNoStats: 300}[w.Workload]; r[0].Load.Jobs != want || r[0].Baseline.Jobs != want {
				t.Errorf("%s drained %d and %d jobs, want %d", w.Workload, r[0].Load.Jobs, r[0].Baseline.Jobs, want)
			}
		}
		if len(rep.Continuous) != 1 || rep.Continuous[0].Pushed < 80 || rep.Continuous[0].Missed != 0 || rep.Continuous[0].P99ms <= 0 {
			t.Errorf("continuous: %+v", rep.Continuous)
		}
		for _, table := range []string{cfg.JobsTable, cfg.JobsTable + "_alone", cfg.JobsTable + "_pickup"} {
			if _, err := q.DB().Exec("select 1 from " + q.Dialect().Quote(table)); err == nil {
				t.Errorf("bench left table %s behind", table)
			}
		}
	})
}

// connectionArgs are the flags naming cfg's database and tables.
func connectionArgs(cfg appconfig.Config) []string {
	args := []string{"--db", cfg.Driver, "--db-database", cfg.Database}
	if cfg.Driver != appconfig.EngineSQLite {
		args = append(args, "--db-host", cfg.Host, "--db-port", fmt.Sprint(cfg.Port), "--db-username", cfg.Username)
	}
	return append(args, "--table", cfg.JobsTable, "--failed-table", cfg.FailedTable, "--batches-table", cfg.BatchesTable)
}
