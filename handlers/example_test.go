package handlers_test

import (
	"context"
	"fmt"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// ProcessPodcast mirrors the properties of the PHP class
// App\Jobs\ProcessPodcast.
type ProcessPodcast struct {
	PodcastID int64  `php:"podcastId"`
	Title     string `php:"title"`
}

// A typed handler gets the job's command decoded into its struct.
func ExampleRegister() {
	reg := handlers.NewRegistry()
	handlers.Register(reg, `App\Jobs\ProcessPodcast`, func(ctx context.Context, job *handlers.Job, cmd *ProcessPodcast) error {
		fmt.Printf("processing podcast %d (%s), attempt %d\n", cmd.PodcastID, cmd.Title, job.Attempts)
		return nil
	})

	// What `ProcessPodcast::dispatch(42, 'Go gophers')` writes to the jobs
	// table; the worker hands it to the handler.
	job := dispatched(phpserialize.Object(`App\Jobs\ProcessPodcast`,
		phpserialize.Public("podcastId", phpserialize.Int(42)),
		phpserialize.Public("title", phpserialize.String("Go gophers"))))
	h, _ := reg.Lookup(job.DisplayName)
	if err := h.Handle(context.Background(), job); err != nil {
		fmt.Println("failed:", err)
	}
	// Output: processing podcast 42 (Go gophers), attempt 1
}

// Middleware wraps every handler of a registry, net/http style; the first
// added is the outermost.
func ExampleRegistry_Use() {
	reg := handlers.NewRegistry()
	reg.Use(func(next handlers.Handler) handlers.Handler {
		return handlers.HandlerFunc(func(ctx context.Context, job *handlers.Job) error {
			fmt.Println("before", job.DisplayName)
			err := next.Handle(ctx, job)
			fmt.Println("after, error:", err)
			return err
		})
	})
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, job *handlers.Job) error {
		fmt.Println("sending invoice")
		return nil
	})

	job := dispatched(phpserialize.Object(`App\Jobs\SendInvoice`))
	h, _ := reg.Lookup(job.DisplayName)
	_ = h.Handle(context.Background(), job)
	// Output:
	// before App\Jobs\SendInvoice
	// sending invoice
	// after, error: <nil>
}

// dispatched is the job a worker would hand over for a command pushed as
// Laravel's dispatch() pushes it, on its first attempt.
func dispatched(command *phpserialize.Value) *handlers.Job {
	raw, err := payload.BuildObjectPayload(command, payload.BuildOptions{})
	if err != nil {
		panic(err)
	}
	p, err := payload.Parse(raw)
	if err != nil {
		panic(err)
	}
	return handlers.NewJob(1, "default", 1, p, handlers.Env{})
}
