// Command laraworker runs Laravel database-queue jobs in Go, beside
// `php artisan queue:work`.
package main

import (
	"os"

	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/handlers"
)

func main() {
	os.Exit(console.Run(console.New(handlers.NewRegistry()), os.Args))
}
