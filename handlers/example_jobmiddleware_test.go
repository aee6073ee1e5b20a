package handlers_test

import (
	"context"
	"fmt"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// SyncPodcast mirrors App\Jobs\SyncPodcast, whose middleware() is
//
//	return [
//	    (new WithoutOverlapping($this->podcastId))->releaseAfter(10),
//	    new RateLimited('podcasts'),
//	];
//
// with RateLimiter::for('podcasts', fn ($job) => Limit::perMinute(60)->by($job->podcastId)).
type SyncPodcast struct {
	PodcastID int64 `php:"podcastId"`
}

// The registration declares the class's job middleware in the order its
// middleware() returns them. The worker applies them around the handler
// with Laravel's keys in the app's cache store, so the PHP workers still
// running the class and the Go worker hold one lock per podcast and count
// in one limit of 60 a minute per podcast.
func ExampleWithoutOverlapping() {
	podcastID := handlers.KeyProperty("podcastId")
	reg := handlers.NewRegistry()
	handlers.Register(reg, `App\Jobs\SyncPodcast`,
		func(ctx context.Context, job *handlers.Job, cmd *SyncPodcast) error {
			return nil // sync cmd.PodcastID
		},
		handlers.WithoutOverlapping(podcastID, handlers.ReleaseAfter(10*time.Second)),
		handlers.RateLimited("podcasts", func(cmd *payload.Command) ([]handlers.Limit, error) {
			id, err := podcastID(cmd)
			return []handlers.Limit{handlers.PerMinute(60).By(id)}, err
		}),
	)

	cmd := &payload.Command{Object: phpserialize.Object(`App\Jobs\SyncPodcast`,
		phpserialize.Public("podcastId", phpserialize.Int(7)))}
	for _, m := range reg.Class(`App\Jobs\SyncPodcast`).Middleware {
		switch m.Type {
		case handlers.TypeWithoutOverlapping:
			key, _ := m.Key(cmd)
			fmt.Printf("%s key %s, released after %s\n", m.Type, key, *m.ReleaseAfter)
		case handlers.TypeRateLimited:
			limits, _ := m.Limits(cmd)
			fmt.Printf("%s %s: %d per %s by %s\n", m.Type, m.Limiter, limits[0].MaxAttempts, limits[0].Decay, limits[0].Key)
		}
	}
	// Output:
	// WithoutOverlapping key 7, released after 10s
	// RateLimited podcasts: 60 per 1m0s by 7
}

// ThrottlesExceptions: a failing feed's exceptions are swallowed and the
// job released after the backoff; once 5 are counted within 10 minutes,
// every job of the key waits until the window ends.
func ExampleThrottlesExceptions() {
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\ImportFeed`, func(ctx context.Context, job *handlers.Job) error {
		return fmt.Errorf("the feed is down")
	}, handlers.ThrottlesExceptions(5, 10*time.Minute, handlers.By(handlers.KeyString("feeds")), handlers.Backoff(time.Minute)))

	m := reg.Class(`App\Jobs\ImportFeed`).Middleware[0]
	fmt.Println(m.Type, m.MaxAttempts, m.Decay, m.Backoff)
	// Output: ThrottlesExceptions 5 10m0s 1m0s
}
