package handlers_test

import (
	"context"
	"fmt"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// UpdateSearchIndex mirrors App\Jobs\UpdateSearchIndex, a ShouldBeUnique
// job whose uniqueId() is its product id.
type UpdateSearchIndex struct {
	ProductID int64 `php:"productId"`
}

// Options declare what the PHP class is beyond its properties. The worker
// then releases a ShouldBeUnique job's lock when it is done or has failed
// (Laravel 11.39+ names the lock in the payload; 8 to 11.38 need the
// uniqueId declared), and looks up the job's models before each run.
func ExampleShouldBeUnique() {
	reg := handlers.NewRegistry()
	handlers.Register(reg, `App\Jobs\UpdateSearchIndex`,
		func(ctx context.Context, job *handlers.Job, cmd *UpdateSearchIndex) error {
			return nil // reindex cmd.ProductID
		},
		handlers.ShouldBeUnique(handlers.UniqueIDProperty("productId")),
		handlers.Models(handlers.Model{Class: `App\Models\Product`, Table: "products"}),
	)

	class := reg.Class(`App\Jobs\UpdateSearchIndex`)
	cmd := &payload.Command{Object: phpserialize.Object(`App\Jobs\UpdateSearchIndex`,
		phpserialize.Public("productId", phpserialize.Int(42)))}
	id, _ := class.Unique.ID(cmd)
	fmt.Printf("uniqueId %q, models in %s\n", id, class.Models[0].Table)
	// Output: uniqueId "42", models in products
}

// A handler that finds its model gone returns ModelNotFound: the job is
// deleted silently when the class deletes when models are missing, else
// failed at once with Laravel's ModelNotFoundException.
func ExampleModelNotFound() {
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\SendWelcome`, func(ctx context.Context, job *handlers.Job) error {
		return handlers.ModelNotFound(`App\Models\User`, 7)
	}, handlers.DeleteWhenMissingModels())

	h, _ := reg.Lookup(`App\Jobs\SendWelcome`)
	err := h.Handle(context.Background(), dispatched(phpserialize.Object(`App\Jobs\SendWelcome`)))
	fmt.Println(err)
	// Output: No query results for model [App\Models\User] 7
}
