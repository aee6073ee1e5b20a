// Command laraworker runs Laravel database-queue jobs in Go, beside
// `php artisan queue:work`.
package main

import (
	"os"

	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/test/bench"
)

func main() {
	app := console.New(handlers.NewRegistry(), console.Options{Name: "laraworker"})
	// The tour and the benchmark belong to this binary only: a program
	// embedding laraworker gets the worker commands without them.
	app.Commands = append(app.Commands, console.DemoCommand(), bench.Command())
	os.Exit(console.Run(app, os.Args))
}
