// Package democmd is `demo`: the newcomer's tour on an embedded SQLite
// database (Laravel's tables, a few jobs pushed as Laravel would, a worker
// that runs them).
package democmd

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/worker"
	"github.com/urfave/cli/v2"
)

// Demo job classes: what a Laravel app would dispatch.
const (
	demoWelcome = `App\Jobs\SendWelcomeEmail`
	demoResize  = `App\Jobs\ResizeImage`
	demoReport  = `App\Jobs\BuildReport`
)

// Command is `demo` (console.DemoCommand).
func Command() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "create the tables in an embedded SQLite database, push a few jobs as Laravel would, and run them",
		Description: `The demo runs on a temporary SQLite file, removed at the end; it never
writes into a database of the current folder (a Laravel 11+ app keeps its own
in database/database.sqlite). --database FILE keeps the demo's database in
FILE: a new file, or one an earlier demo made; a file holding any other
table is refused.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "database", Usage: "keep the demo's SQLite database in this `FILE` (default: a temporary file, removed at the end)"},
		},
		Action: runDemo,
	}
}

func runDemo(c *cli.Context) error {
	ctx := context.Background()
	out := c.App.Writer
	path := c.String("database")
	if path == "" {
		dir, err := os.MkdirTemp("", "laraworker-demo-")
		if err != nil {
			return cli.Exit("demo: "+err.Error(), 1)
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "demo.sqlite")
		fmt.Fprintf(out, "Demo database: %s (temporary, removed at the end; --database FILE keeps one)\n", path)
	} else {
		if err := checkDemoDatabase(ctx, path); err != nil {
			return cli.Exit("demo: "+err.Error(), 1)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return cli.Exit(err.Error(), 1)
		}
		fmt.Fprintf(out, "Demo database: %s (kept)\n", path)
	}
	// Nothing from the shell's environment (DB_*, LARAWORKER_*) may point
	// the demo elsewhere: its tables are Laravel's default ones.
	cfg := appconfig.Config{Driver: appconfig.EngineSQLite, Database: path}.WithDefaults()
	q, err := queueconn.Open(ctx, cfg, appconfig.AppInfo{}, queueconn.Options{})
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer q.Close()
	if err := q.CreateTables(ctx); err != nil {
		return cli.Exit(err.Error(), 1)
	}
	n, err := pushDemoJobs(ctx, q.Store)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	fmt.Fprintf(out, "Pushed %d jobs into %s (tables jobs, failed_jobs, job_batches).\n", n, cfg.Database)

	reg := handlers.NewRegistry()
	registerDemoHandlers(reg)
	w, err := worker.New(q.Store, reg, worker.Config{
		StopWhenEmpty: true, Sleep: 50 * time.Millisecond, Concurrency: 4, Logger: output.Logger(c),
	})
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	reason := w.Run(ctx)
	fmt.Fprintf(out, "\nWorker stopped (%s) after %d job runs.\n", reason, w.Claimed())
	return printDemoSummary(ctx, c, q)
}

// demoTables are the tables the demo creates (Laravel's default names).
var demoTables = []string{"jobs", "failed_jobs", "job_batches"}

// checkDemoDatabase refuses a --database file that holds any table the
// demo did not create: it is some app's database (a Laravel 11+ app keeps
// one in database/database.sqlite), and the demo would push jobs into its
// queue and leave failures in its failed_jobs. The file is only read.
func checkDemoDatabase(ctx context.Context, path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case st.IsDir():
		return fmt.Errorf("--database %s is a folder; give a file", path)
	case st.Size() == 0:
		return nil
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `select name from sqlite_master where type = 'table' and name not like 'sqlite\_%' escape '\' order by name`)
	if err != nil {
		return fmt.Errorf("--database %s is not an SQLite database the demo can use: %w", path, err)
	}
	defer rows.Close()
	var others []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return err
		}
		if !slices.Contains(demoTables, name) {
			others = append(others, name)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("--database %s: %w", path, err)
	}
	if len(others) > 0 {
		return fmt.Errorf("--database %s holds tables the demo did not create (%s): it looks like an app's database, and the demo would push jobs into it; give a new file, or leave --database out for a temporary one",
			path, strings.Join(others, ", "))
	}
	return nil
}

func pushDemoJobs(ctx context.Context, q jobqueue.Admin) (int, error) {
	var items []jobqueue.PushItem
	add := func(class string, props ...phpserialize.Entry) error {
		raw, err := payload.BuildObjectPayload(phpserialize.Object(class, props...), payload.BuildOptions{})
		items = append(items, jobqueue.PushItem{Payload: raw})
		return err
	}
	for i, email := range []string{"ada@example.com", "grace@example.com", "linus@example.com"} {
		if err := add(demoWelcome, phpserialize.Public("userId", phpserialize.Int(int64(i+1))), phpserialize.Public("email", phpserialize.String(email))); err != nil {
			return 0, err
		}
	}
	if err := add(demoResize, phpserialize.Public("path", phpserialize.String("photos/cat.jpg")), phpserialize.Public("tries", phpserialize.Int(3))); err != nil {
		return 0, err
	}
	if err := add(demoReport, phpserialize.Public("month", phpserialize.String("2026-11"))); err != nil {
		return 0, err
	}
	return len(items), q.PushMany(ctx, items)
}

// registerDemoHandlers shows the three shapes of handler: a typed one, one
// that fails once and is retried, and one that fails for good.
func registerDemoHandlers(reg *handlers.Registry) {
	type welcome struct {
		UserID int64  `php:"userId"`
		Email  string `php:"email"`
	}
	handlers.Register(reg, demoWelcome, func(_ context.Context, job *handlers.Job, cmd *welcome) error {
		fmt.Printf("  sending a welcome email to %s (user %d)\n", cmd.Email, cmd.UserID)
		return nil
	})
	var resizeRuns atomic.Int32
	reg.HandleFunc(demoResize, func(_ context.Context, job *handlers.Job) error {
		if resizeRuns.Add(1) == 1 {
			fmt.Printf("  resizing failed on attempt %d; Laravel's rules release it for a retry\n", job.Attempts)
			return errors.New("image service busy")
		}
		fmt.Printf("  resized on attempt %d\n", job.Attempts)
		return nil
	})
	reg.HandleFunc(demoReport, func(context.Context, *handlers.Job) error {
		fmt.Println("  building the report failed; with --tries=1 it goes to failed_jobs")
		return errors.New("no data for 2026-11")
	})
}

func printDemoSummary(ctx context.Context, c *cli.Context, q *queueconn.Connection) error {
	out := c.App.Writer
	sizes, err := q.Store.Sizes(ctx)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	left := int64(0)
	for _, s := range sizes {
		left += s.Total()
	}
	failed, err := q.Store.ListFailed(ctx, "")
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	fmt.Fprintf(out, "Jobs left in the jobs table: %d. Failed jobs (what `php artisan queue:failed` would list):\n", left)
	for _, f := range failed {
		fmt.Fprintf(out, "  %s  %s  %s\n", f.UUID, f.Class, f.FailedAt)
	}
	fmt.Fprintln(out, "\nNext: point `laraworker work --env /path/to/laravel/.env --route 'App\\Jobs\\X=log'` at your app.")
	return nil
}
