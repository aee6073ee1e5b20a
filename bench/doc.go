// Package bench is `laraworker bench`: throughput of laraworker against
// `php artisan queue:work` and raw-SQL loops of the same statements, and
// the drains.
// It lives apart from package console so that programs embedding the
// worker CLI do not link it; the laraworker binary adds Command to its app.
package bench
