package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/laraworker/laraworker/internal/dashboard"
	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
	"github.com/rs/zerolog"
)

// Serve the dashboard on an app's database queue (SQLite here): the
// snapshot reads the tables in the background, pages read the snapshot.
func Example() {
	dir, _ := os.MkdirTemp("", "dashboard-example")
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q, err := database.Open(ctx, appconfig.Config{Driver: "sqlite", Database: filepath.Join(dir, "app.sqlite")}, database.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer q.Close()
	fl := fleet.On(q.DB(), q.Dialect(), "")
	if err := q.CreateTables(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if err := fl.CreateTables(ctx); err != nil {
		fmt.Println(err)
		return
	}
	raw := []byte(`{"uuid":"9b2f0d4e-0c1a-4b7a-8f5e-2d6c1e0a9b11","displayName":"App\\Jobs\\SendInvoice","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\SendInvoice","command":"O:20:\"App\\Jobs\\SendInvoice\":0:{}"}}`)
	if _, err := q.Push(ctx, jobqueue.PushItem{Queue: "billing", Payload: raw}); err != nil {
		fmt.Println(err)
		return
	}
	cfg := q.Config()
	srv, err := dashboard.New(dashboard.Options{
		Tables: snapshot.Tables{DB: q.DB(), Dialect: q.Dialect(), Jobs: cfg.JobsTable, Failed: cfg.FailedTable,
			Location: cfg.Location(), RetryAfter: q.RetryAfter()},
		Store: q, Fleet: fl, Logger: zerolog.Nop(),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	go srv.Snapshot().Run(ctx)
	if err := srv.Snapshot().Refreshed(ctx); err != nil {
		fmt.Println(err)
		return
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "http://localhost/jobs", nil)
	srv.ServeHTTP(rec, req)
	body := rec.Body.String()
	fmt.Println(rec.Code, strings.Contains(body, "billing"), strings.Contains(body, `App\Jobs\SendInvoice`))
	// Output:
	// 200 true true
}
