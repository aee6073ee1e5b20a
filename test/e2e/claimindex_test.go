package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// claimIndexMigration is the bridge's migration as vendor:publish copies it.
const claimIndexMigration = "database/migrations/2026_11_30_000000_add_laraworker_claim_index.php"

// TestClaimIndexBesideLaravel: the bridge's migration adds the claim index
// (`php artisan migrate`), Laravel's writers (dispatch, delayed dispatch,
// queue:retry from failed_jobs) and `queue:work` go on working with it, a
// Go worker claims through it only its own class, and the rollback gives
// the table back as Laravel made it.
func TestClaimIndexBesideLaravel(t *testing.T) { onEachDB(t, testClaimIndexBesideLaravel) }

func testClaimIndexBesideLaravel(t *testing.T, s *suite) {
	s.artisan(t, "vendor:publish", "--tag=laraworker-migrations", "--force")
	t.Cleanup(func() {
		// The other tests run on the table as Laravel made it.
		s.artisan(t, "migrate:rollback", "--path="+claimIndexMigration, "--force")
		_ = os.Remove(filepath.Join(s.app, claimIndexMigration))
		if info, err := s.q.DetectClaimPath(s.ctx(t)); err != nil || info.Path != database.ClaimPathLaravel || info.PreviousIndex {
			t.Errorf("after the rollback: %+v %v", info, err)
		}
	})
	// An earlier version's queue index (it held reserved_at): the
	// migration replaces it.
	jobs := s.q.Config().JobsTable
	s.exec(t, "create index "+jobs+"_laraworker_claim_index on "+jobs+" (queue, reserved_at, available_at, id)")
	if info, err := s.q.DetectClaimPath(s.ctx(t)); err != nil || info.Path != database.ClaimPathLaravel || !info.PreviousIndex {
		t.Fatalf("with the previous version's index: %+v %v", info, err)
	}
	s.artisan(t, "migrate", "--path="+claimIndexMigration, "--force")
	if info, err := s.q.DetectClaimPath(s.ctx(t)); err != nil || info.Path != database.ClaimPathIndexed {
		t.Fatalf("after the migration: %+v %v", info, err)
	}
	if s.hasIndex(t, jobs+"_laraworker_claim_index") {
		t.Fatal("the migration left the previous version's index")
	}

	for _, kind := range []string{"scalars", "noop", "throws", "noop", "enums-dates"} {
		s.artisan(t, "app:dispatch", kind)
	}
	s.artisan(t, "app:dispatch", "noop", "--count=3", "--delay=3600") // delayed: nobody takes these
	s.work(t, "--stop-when-empty", s.route(`App\Jobs\NoopJob`))
	s.phpWork(t, "--stop-when-empty")
	if f := s.failed(t); len(f) != 1 {
		t.Fatalf("failed jobs %+v, want the FailingJob", f)
	}
	s.artisan(t, "queue:retry", "all") // Laravel's insert from failed_jobs
	s.phpWork(t, "--stop-when-empty")

	byUUID := runsByUUID(s.runs(t))
	goRuns := 0
	for uuid, rs := range byUUID {
		for _, r := range rs {
			if r.Worker == "go" {
				goRuns++
				if r.Class != `App\Jobs\NoopJob` {
					t.Errorf("Go ran %s (%s)", r.Class, uuid)
				}
			}
		}
	}
	if goRuns != 2 {
		t.Errorf("Go ran %d jobs, want the 2 ready NoopJobs: %+v", goRuns, byUUID)
	}
	delayed := 0
	for _, j := range s.jobs(t) {
		if j.Class == `App\Jobs\NoopJob` && j.Attempts == 0 && !j.ReservedAt.Valid {
			delayed++
		}
	}
	if delayed != 3 {
		t.Errorf("%d delayed NoopJobs left untouched, want 3: %+v", delayed, s.jobs(t))
	}
}

// hasIndex asks the catalogue whether the jobs table has the named index.
func (s *suite) hasIndex(t *testing.T, name string) bool {
	t.Helper()
	query := map[string]string{
		appconfig.EngineMySQL:  "select count(*) from information_schema.statistics where table_schema = database() and table_name = ? and index_name = ?",
		appconfig.EnginePgSQL:  "select count(*) from pg_indexes where tablename = ? and indexname = ?",
		appconfig.EngineSQLite: "select count(*) from sqlite_master where type = 'index' and tbl_name = ? and name = ?",
	}[s.q.Dialect().Name()]
	var n int
	if err := s.q.DB().QueryRowContext(s.ctx(t), s.q.Dialect().Rebind(query), s.q.Config().JobsTable, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}
