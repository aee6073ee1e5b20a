package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
	"github.com/laraworker/laraworker/worker"
)

// Run a worker on an embedded SQLite database: the tables are Laravel's,
// the job is what `SendWelcome::dispatch('ada@example.com')` writes, and
// the worker stops once the queue is empty (--stop-when-empty).
func Example() {
	dir, _ := os.MkdirTemp("", "laraworker-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	// Laravel's defaults (tables jobs, failed_jobs, job_batches; queue
	// default; retry_after 90) fill what the Config leaves out.
	q, err := database.Open(ctx, appconfig.Config{Driver: "sqlite", Database: filepath.Join(dir, "database.sqlite")}, database.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer q.Close()
	if err := q.CreateTables(ctx); err != nil {
		fmt.Println(err)
		return
	}
	raw, _ := payload.BuildObjectPayload(phpserialize.Object(`App\Jobs\SendWelcome`,
		phpserialize.Public("email", phpserialize.String("ada@example.com"))), payload.BuildOptions{})
	if _, err := q.Push(ctx, jobqueue.PushItem{Payload: raw}); err != nil {
		fmt.Println(err)
		return
	}

	reg := handlers.NewRegistry()
	handlers.Register(reg, `App\Jobs\SendWelcome`, func(ctx context.Context, job *handlers.Job, cmd *struct {
		Email string `php:"email"`
	}) error {
		fmt.Println("welcome mail to", cmd.Email)
		return nil
	})
	// --memory 512: this example runs inside the package's test binary,
	// which under the race detector alone is near the 128 MB default.
	w, err := worker.New(q, reg, worker.Config{StopWhenEmpty: true, MemoryMB: 512})
	if err != nil {
		fmt.Println(err)
		return
	}
	reason := w.Run(ctx)
	st := w.Stats()
	fmt.Printf("stopped: %s, %d done, %d failed\n", reason, st.Done, st.Failed)
	// Output:
	// welcome mail to ada@example.com
	// stopped: empty, 1 done, 0 failed
}
