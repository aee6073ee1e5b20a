<?php

namespace App\Providers;

use App\Support\RunRecorder;
use Illuminate\Cache\RateLimiting\Limit;
use Illuminate\Queue\Events\JobFailed;
use Illuminate\Support\Facades\Event;
use Illuminate\Cache\RateLimiter;
use Illuminate\Support\ServiceProvider;

/**
 * What the bridge's hook tests need from an app: named rate limiters (as
 * an app registers them at boot) and a JobFailed listener (as Horizon,
 * Telescope or an app's Queue::failing() are), recording the failures of
 * App\Jobs\Hooks\* jobs only.
 */
class HooksServiceProvider extends ServiceProvider
{
    public function boot()
    {
        // Registered when the limiter is first resolved, not at boot:
        // resolving it at boot opens the cache store (the database), which
        // commands that never touch the database (laraworker's config and
        // class readers) must not need.
        $this->callAfterResolving(RateLimiter::class, function (RateLimiter $limiter) {
            $limiter->for('podcasts', function ($job) {
                return [
                    Limit::perMinute(3)->by($job->podcastId),
                    Limit::perHour(100),
                ];
            });
            $limiter->for('unlimited', function ($job) {
                return Limit::none();
            });
            $limiter->for('per-class', function ($job) {
                return Limit::perMinute(10)->by(get_class($job));
            });
            $limiter->for('podcast-sync', function ($job) {
                return Limit::perMinute(3)->by($job->podcast->id);
            });
            $limiter->for('episode-import', function ($job) {
                return Limit::perMinute(8);
            });
        });
        Event::listen(JobFailed::class, function (JobFailed $event) {
            $name = $event->job->resolveName();
            if (strpos($name, 'App\\Jobs\\Hooks\\') !== 0) {
                return;
            }
            RunRecorder::record(null, 'event:JobFailed', [
                'uuid' => $event->job->uuid(),
                'name' => $name,
                'connection' => $event->connectionName,
                'queue' => $event->job->getQueue(),
                'jobId' => $event->job->getJobId(),
                'attempts' => $event->job->attempts(),
                'exception' => get_class($event->exception),
                'message' => $event->exception->getMessage(),
                'payloadMd5' => md5($event->job->getRawBody()),
                'jobClass' => get_class($event->job),
            ]);
        });
    }
}
