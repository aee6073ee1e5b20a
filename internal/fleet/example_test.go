package fleet_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/sqldb"
	_ "modernc.org/sqlite"
)

// Record a worker, pause a queue as the dashboard's Control page does, and
// read both back, on an app's database (SQLite here).
func Example() {
	dir, _ := os.MkdirTemp("", "fleet-example")
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", filepath.Join(dir, "app.sqlite"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	d, _ := sqldb.DialectFor("sqlite")
	ctx := context.Background()
	s := fleet.On(db, d, "") // laraworker_workers, laraworker_pauses, laraworker_history
	if err := s.CreateTables(ctx); err != nil {
		fmt.Println(err)
		return
	}
	now := time.Unix(1_800_000_000, 0)
	if err := s.UpsertWorker(ctx, fleet.WorkerRow{ID: "go:web1:4242:1800000000", Kind: fleet.KindGo, Name: "images",
		Host: "web1", PID: 4242, Queues: []string{"images"}, Concurrency: 16, StartedAt: now.Unix(), LastSeenAt: now.Unix()}); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.SetPause(ctx, fleet.ScopeQueue, "images", now); err != nil {
		fmt.Println(err)
		return
	}
	workers, _ := s.Workers(ctx)
	pauses, _ := s.Pauses(ctx)
	for _, w := range workers {
		fmt.Println(w.ID, w.Kind, w.Queues, w.Concurrency)
	}
	for _, p := range pauses {
		fmt.Println("paused:", p.Scope, p.Target)
	}
	// Output:
	// go:web1:4242:1800000000 go [images] 16
	// paused: queue images
}
