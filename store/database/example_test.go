package database_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
)

// Push a job exactly as Laravel's dispatch() would, so `php artisan
// queue:work` (or laraworker) runs it, then read the queue's size as
// `laraworker size` does.
func ExampleQueue_Push() {
	dir, _ := os.MkdirTemp("", "laraworker-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	// Normally the app's own: appconfig.Load(ctx, appconfig.Options{AppDir: "/var/www/app"}).
	// Fields left out take Laravel's defaults (tables jobs, failed_jobs,
	// job_batches, queue default, retry_after 90...).
	cfg := appconfig.Config{Driver: appconfig.EngineSQLite, Database: filepath.Join(dir, "database.sqlite")}
	q, err := database.Open(ctx, cfg, database.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer q.Close()
	if err := q.CreateTables(ctx); err != nil {
		fmt.Println(err)
		return
	}

	// `new App\Jobs\ResizeImage(7)` as createObjectPayload writes it.
	raw, err := payload.BuildObjectPayload(phpserialize.Object(`App\Jobs\ResizeImage`,
		phpserialize.Public("imageId", phpserialize.Int(7))), payload.BuildOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := q.Push(ctx, jobqueue.PushItem{Queue: "images", Payload: raw}); err != nil {
		fmt.Println(err)
		return
	}

	sizes, _ := q.Sizes(ctx)
	for _, s := range sizes {
		fmt.Printf("%s: %d ready, %d delayed, %d reserved\n", s.Queue, s.Ready, s.Delayed, s.Reserved)
	}
	// Output: images: 1 ready, 0 delayed, 0 reserved
}
