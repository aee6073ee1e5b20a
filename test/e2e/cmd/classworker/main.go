// Command classworker is laraworker built as a library program, with
// registrations that declare what the Laravel test app's classes are
// (handlers.ShouldBeUnique, handlers.Models, handlers.DeleteWhenMissingModels).
// Each class runs the e2e recorder (exec handler), so runs land in
// job_runs as for `laraworker work --route`. The recorder's path comes
// from LARAWORKER_E2E_RECORDER; RECORDER_FAIL_WHEN (NAME=V) makes it fail
// for matching commands.
package main

import (
	"os"

	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/handlers"
)

func main() {
	recorder := []string{os.Getenv("LARAWORKER_E2E_RECORDER"), "-env", os.Getenv("LARAWORKER_ENV")}
	if when := os.Getenv("RECORDER_FAIL_WHEN"); when != "" {
		recorder = append(recorder, "-fail", "failing as asked", "-when", when)
	}
	run := handlers.Exec(recorder, handlers.ExecOptions{})
	models := handlers.Models(
		handlers.Model{Class: `App\Models\Podcast`, Table: "podcasts"},
		handlers.Model{Class: `App\Models\User`, Table: "users"},
	)
	reg := handlers.NewRegistry()
	reg.Handle(`App\Jobs\UniqueJob`, run, handlers.ShouldBeUnique(handlers.UniqueIDProperty("productId")))
	reg.Handle(`App\Jobs\ModelsJob`, run, models)
	reg.Handle(`App\Jobs\DeletableModelJob`, run, models, handlers.DeleteWhenMissingModels())
	os.Exit(console.Run(console.New(reg, console.Options{Name: "classworker"}), os.Args))
}
