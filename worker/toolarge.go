package worker

import (
	"fmt"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/laravel/payload"
)

// reasonTooLarge is the outcome of a job whose payload is at least the
// worker's memory limit.
const reasonTooLarge = "too_large"

// tooLarge fails, before decoding it, a job whose payload alone is at
// least the worker's memory limit (--memory): decoding it takes several
// times its size, so every attempt would end with the worker stopping
// (exit 12) past its limit, and the job, if the process were killed, back
// on the queue for the next start. Its size is known once claimed (the
// row's payload, the string the Redis pop returned), before any decoding;
// its uuid and class are read from its first bytes. The failed_jobs row
// says why and what to do; the failure runs no hooks (they would carry the
// payload again). A smaller job runs, however large: the worker may stop
// after it, with the job done.
// The caller tests the size (execute), so that a job under the limit
// costs no call.
func (e *jobExecutor) tooLarge(raw []byte) (outcome, *payload.Payload) {
	limit := e.cfg.MemoryMB
	head := payload.TopStrings(raw[:min(len(raw), payload.PrefixLen)], "uuid", "displayName")
	p := &payload.Payload{UUID: head["uuid"], DisplayName: head["displayName"]}
	retry := "php artisan queue:retry " + p.UUID
	if p.UUID == "" {
		retry = "php artisan queue:retry (its failed_jobs uuid)"
	}
	err := &handlers.PHPException{Class: `LaraWorker\PayloadTooLargeException`, Message: fmt.Sprintf(
		"The job's payload is %.1f MB, at least the worker's memory limit (--memory %d MB): decoding it would take the worker past its limit on every attempt. Run it on a worker with a --memory several times its size, or in PHP, then retry it (%s).",
		float64(len(raw))/(1<<20), limit, retry)}
	e.log.Warn().Str("uuid", p.UUID).Str("class", p.DisplayName).Int("payload_bytes", len(raw)).Int("memory_mb", limit).
		Msg("a job's payload is at least the worker's --memory limit: failing it without decoding it")
	return outcome{verdict: verdictFail, err: err, reason: reasonTooLarge, noHooks: true}, p
}
