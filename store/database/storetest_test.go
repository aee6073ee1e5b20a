package database_test

import (
	"testing"

	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue/storetest"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// TestConformance runs the store contract's suite on each engine, with
// the store's own grouped statements and with Laravel's exact ones
// (--laravel-exact), which fence their writes in Go. The database store
// supports every operation; on PostgreSQL its class filter compares
// names exactly, as PostgreSQL's LIKE does (SQL.md).
func TestConformance(t *testing.T) {
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		var unsupported []storetest.Op
		if engine == appconfig.EnginePgSQL {
			unsupported = append(unsupported, storetest.OpClassesWithoutCase)
		}
		for _, exact := range []bool{false, true} {
			name := map[bool]string{false: "grouped", true: "exact"}[exact]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				storetest.Run(t, storetest.Config{Unsupported: unsupported, Open: func(t *testing.T) storetest.Opened {
					clock := storetest.NewClock()
					q := testdb.OpenWith(t, testdb.Config(t, engine), database.Options{Clock: clock.Now, ExactStatements: exact})
					return storetest.Opened{Store: q, Clock: clock, NewBatch: func(t *testing.T, id string, total int) {
						testdb.InsertBatch(t, q, id, total, []byte("a:0:{}"))
					}}
				}})
			})
		}
	})
}
