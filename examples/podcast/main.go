// Command podcast is a worker program of its own: it registers Go handlers
// for two Laravel job classes and runs laraworker's CLI with them, so
// `go run ./examples/podcast work --env /path/to/app/.env` works the queue.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// ProcessPodcast mirrors App\Jobs\ProcessPodcast's properties. Eloquent
// models arrive as ModelIdentifiers (SerializesModels).
type ProcessPodcast struct {
	Podcast payload.ModelIdentifier `php:"podcast"`
	// public string $quality = 'hd'; Laravel 9.4+ leaves it out of the job
	// while it holds that default.
	Quality string `php:"quality,default=\"hd\""`
}

func main() {
	log := zerolog.New(os.Stderr).With().Timestamp().Logger()
	reg := handlers.NewRegistry()
	// Handler timings by class, served with the worker's own metrics on
	// --metrics-addr (the CLI serves Prometheus's default registry).
	reg.Use(handlers.Logging(log), handlers.Metrics(prometheus.DefaultRegisterer))

	handlers.Register(reg, `App\Jobs\ProcessPodcast`, func(ctx context.Context, job *handlers.Job, cmd *ProcessPodcast) error {
		if cmd.Podcast.ID == nil {
			job.Fail(errors.New("the job holds no podcast"))
			return nil
		}
		fmt.Printf("processing podcast %v at %s quality (attempt %d)\n", cmd.Podcast.ID, cmd.Quality, job.Attempts)
		return nil
	})
	reg.HandleFunc(`App\Jobs\PingWebhook`, func(ctx context.Context, job *handlers.Job) error {
		// A plain handler reads properties from the command tree.
		cmd, err := job.Command()
		if err != nil {
			return err
		}
		url, err := cmd.Object.Prop("url")
		if err != nil {
			return err
		}
		fmt.Printf("would ping %s\n", url.Str)
		return nil
	})
	// The program names itself; its version is the module version the Go
	// toolchain recorded (or -ldflags "-X .../console.Version=...").
	app := console.New(reg, console.Options{Name: "podcast", Usage: "runs the podcast jobs of the Laravel app in Go"})
	os.Exit(console.Run(app, os.Args))
}
