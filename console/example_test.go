package console_test

import (
	"context"
	"fmt"

	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/handlers"
)

// A program of its own: its handlers, laraworker's commands, its name.
// `myworker work --app /var/www/app` then runs its jobs beside PHP.
func Example() {
	type ResizeImage struct {
		ImageID int64 `php:"imageId"`
	}
	reg := handlers.NewRegistry()
	handlers.Register(reg, `App\Jobs\ResizeImage`, func(ctx context.Context, job *handlers.Job, cmd *ResizeImage) error {
		return nil // resize cmd.ImageID
	})
	app := console.New(reg, console.Options{Name: "myworker", Version: "1.2.3"})
	status := console.Run(app, []string{"myworker", "--version"})
	fmt.Println("exit status", status)
	// Output:
	// myworker version 1.2.3
	// exit status 0
}
