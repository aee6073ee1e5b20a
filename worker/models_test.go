package worker

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/store/database"
)

// usersTable creates a users table (as the app's) holding the given ids.
func usersTable(t *testing.T, q *database.Queue, ids ...int) string {
	t.Helper()
	table := "users_" + strings.TrimPrefix(q.Config().JobsTable, "jobs_")
	d := q.Dialect()
	exec(t, q, fmt.Sprintf("create table %s (id integer primary key, email varchar(100))", d.Quote(table)))
	t.Cleanup(func() { q.DB().Exec("drop table " + d.Quote(table)) })
	for _, id := range ids {
		exec(t, q, fmt.Sprintf("insert into %s (id, email) values (?, ?)", d.Quote(table)), id, fmt.Sprintf("u%d@example.com", id))
	}
	return table
}

// with13Key turns the 12.67 models.json payload into the 13.x shape, which
// carries deleteWhenMissingModels itself.
func with13Key(t *testing.T, value bool) []byte {
	raw := string(fixture1267(t, "models.json"))
	return []byte(strings.Replace(raw, `"retryUntil":null,`, fmt.Sprintf(`"retryUntil":null,"deleteWhenMissingModels":%t,`, value), 1))
}

// TestMissingModelsAsCallQueuedHandler: ModelJob (12.67 fixture) holds
// User #1 and a collection of #2, #3. Gone #1 means Laravel's
// ModelNotFoundException, failed at once, or a silent delete when the class
// (8-12: the registration; 13: the payload) deletes when models are
// missing. The collection is not checked, as PHP keeps what is left of it.
func TestMissingModelsAsCallQueuedHandler(t *testing.T) {
	cases := []struct {
		name       string
		users      []int
		raw        func(t *testing.T) []byte
		deleteOpt  bool
		wantRun    bool
		wantFailed bool
	}{
		{"present (collection partly gone)", []int{1}, func(t *testing.T) []byte { return fixture1267(t, "models.json") }, false, true, false},
		{"gone, fails", []int{2, 3}, func(t *testing.T) []byte { return fixture1267(t, "models.json") }, false, false, true},
		{"gone, registration deletes (8-12)", []int{2, 3}, func(t *testing.T) []byte { return fixture1267(t, "models.json") }, true, false, false},
		{"gone, payload deletes (13)", nil, func(t *testing.T) []byte { return with13Key(t, true) }, false, false, false},
		{"gone, payload keeps (13) over the registration", nil, func(t *testing.T) []byte { return with13Key(t, false) }, true, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			testdb.ForEachEngine(t, func(t *testing.T, engine string) {
				q := testdb.Open(t, testdb.Config(t, engine))
				table := usersTable(t, q, c.users...)
				pushRaw(t, q, "default", c.raw(t))
				ran := newCounter()
				opts := []handlers.Option{handlers.Models(handlers.Model{Class: `App\Models\User`, Table: table})}
				if c.deleteOpt {
					opts = append(opts, handlers.DeleteWhenMissingModels())
				}
				reg := handlers.NewRegistry()
				reg.HandleFunc(`App\Jobs\ModelJob`, func(_ context.Context, j *handlers.Job) error { ran.add(j); return nil }, opts...)
				cfg := testConfig()
				cfg.Tries = 5 // a missing model fails at once, whatever tries are left
				w, logs := newTestWorker(t, q, reg, cfg, nil)
				runWorker(t, w, 30*time.Second)
				if got := ran.total() == 1; got != c.wantRun {
					t.Errorf("handler ran: %v, want %v", got, c.wantRun)
				}
				failed := failedRows(t, q)
				if (len(failed) == 1) != c.wantFailed {
					t.Fatalf("%d failed jobs, want failed=%v\n%s", len(failed), c.wantFailed, logs)
				}
				if c.wantFailed {
					mustContain(t, "exception", failed[0].Exception,
						`Illuminate\Database\Eloquent\ModelNotFoundException: No query results for model [App\Models\User]. in `)
				}
				if n := len(jobRows(t, q)); n != 0 {
					t.Errorf("%d jobs left", n)
				}
			})
		})
	}
}

// TestHandlerReportsMissingModel: a handler's ModelNotFound takes the same
// path, with the ids it names.
func TestHandlerReportsMissingModel(t *testing.T) {
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		q := testdb.Open(t, testdb.Config(t, engine))
		pushRaw(t, q, "default", mustBuild(t, `App\Jobs\Podcasts`))
		pushRaw(t, q, "default", mustBuild(t, `App\Jobs\Quiet`))
		reg := handlers.NewRegistry()
		gone := func(context.Context, *handlers.Job) error {
			return fmt.Errorf("loading: %w", handlers.ModelNotFound(`App\Models\Podcast`, 5, 6))
		}
		reg.HandleFunc(`App\Jobs\Podcasts`, gone)
		reg.HandleFunc(`App\Jobs\Quiet`, gone, handlers.DeleteWhenMissingModels())
		cfg := testConfig()
		cfg.Tries = 5
		w, _ := newTestWorker(t, q, reg, cfg, nil)
		runWorker(t, w, 30*time.Second)
		failed := failedRows(t, q)
		if len(failed) != 1 || len(jobRows(t, q)) != 0 {
			t.Fatalf("failed %d, left %d; want 1 failed (Podcasts) and Quiet deleted", len(failed), len(jobRows(t, q)))
		}
		mustContain(t, "exception", failed[0].Exception,
			`Illuminate\Database\Eloquent\ModelNotFoundException: No query results for model [App\Models\Podcast] 5, 6 in `)
	})
}

// TestMissingModelReleasesTheContextLock: handleModelNotFound (11.39+)
// releases the lock the payload names before deleting or failing.
func TestMissingModelReleasesTheContextLock(t *testing.T) {
	const key = `laravel_unique_job:App\Jobs\ModelJob:1`
	raw := strings.Replace(string(fixture1267(t, "models.json")), `"createdAt":1796032508,`,
		`"createdAt":1796032508,"illuminate:log:context":{"data":[],"hidden":{"laravel_unique_job_cache_store":"s:8:\"database\";","laravel_unique_job_key":"s:38:\"`+strings.ReplaceAll(key, `\`, `\\`)+`\";"}},`, 1)
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		q := lockEnv(t, engine)
		table := usersTable(t, q)
		testdb.HoldLock(t, q, key, "php", time.Hour)
		pushRaw(t, q, "default", []byte(raw))
		reg := handlers.NewRegistry()
		reg.HandleFunc(`App\Jobs\ModelJob`, okHandler, handlers.Models(handlers.Model{Class: `App\Models\User`, Table: table}))
		w, logs := newTestWorker(t, q, reg, testConfig(), nil)
		runWorker(t, w, 30*time.Second)
		if lockHeld(t, q, key) {
			t.Errorf("the lock is still held\n%s", logs)
		}
		if len(failedRows(t, q)) != 1 {
			t.Error("the job did not fail")
		}
	})
}
