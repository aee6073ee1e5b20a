// Package bench is `laraworker bench`: throughput of laraworker against
// `php artisan queue:work` and raw-SQL loops of the same statements, and
// `bench soak`, the memory of one worker over a long steady stream of jobs.
// It lives apart from package console so that programs embedding the
// worker CLI do not link it; the laraworker binary adds Command to its app.
package bench
