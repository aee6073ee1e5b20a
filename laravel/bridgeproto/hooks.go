package bridgeproto

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// The bridge's hook job classes (bridge/src/Jobs).
const (
	RunFailureHooksClass   = `Laraworker\Bridge\Jobs\RunFailureHooks`
	RunBatchCallbacksClass = `Laraworker\Bridge\Jobs\RunBatchCallbacks`
)

// Batch callbacks and events a hook job can run, by the names the bridge
// knows them (BatchCallbacks::AFTER_SUCCESS / AFTER_FAILURE), in the order
// Laravel's Batch runs them after a success and after a failure.
var (
	AfterSuccessOrder = []string{"started", "progress", "finished", "then", "finally"}
	AfterFailureOrder = []string{"started", "canceled", "progress", "failure", "catch", "finally"}
)

// Options are what the pushing worker decides about a hook job's payload.
type Options struct {
	// LaravelVersion is the app's Laravel version: it picks the payload key
	// set dispatch() writes there (ShapeFor). "" writes 8.x's keys, which
	// every version reads.
	LaravelVersion string
	// Now is the dispatch time (createdAt on 12.11+); zero: time.Now().
	Now time.Time
	// UUID is the hook job's uuid; "": a new random one.
	UUID string
	// Carried is what the hook job carries on from the job whose hooks it
	// runs (its Laravel Context, Sentry's and W3C trace context), as PHP
	// would have those hooks see them: Laravel hydrates the hook job's
	// Context when it runs it.
	Carried payload.Carried
}

// Failure is a job a Go worker failed, whose failure hooks PHP is to run
// (RunFailureHooks).
type Failure struct {
	// Payload is the failed job's payload exactly as it was in the jobs
	// table (or Redis list).
	Payload []byte
	// Connection and Queue are the queue connection and queue it was on
	// (the bare queue name, not Redis's "queues:<name>").
	Connection, Queue string
	// JobID is its id on the queue (jobs.id); an integer is written as a
	// PHP int, anything else as a string, "" as null.
	JobID string
	// Attempts counts its attempts, the failed one included.
	Attempts int64
	// ExceptionClass and ExceptionMessage are the failure's exception, as
	// the failed_jobs row names it: failed() receives an instance of that
	// class when it is one of Laravel's own (MaxAttemptsExceededException,
	// TimeoutExceededException, ManuallyFailedException,
	// ModelNotFoundException), else a Laraworker\Bridge\GoJobException
	// whose goClass is this name, both with this message.
	ExceptionClass, ExceptionMessage string
	// BatchCallbacks are the batch callbacks Go's failure update of the
	// job's batch triggered (AfterFailure), run before the chain's catch
	// callbacks and failed(), as Laravel runs them. Nil when the job is in
	// no batch or triggered none.
	BatchCallbacks []string
}

// FailureHooksPayload builds the jobs.payload of a RunFailureHooks job for
// a failure, as dispatch() of that job writes it on the app's Laravel
// version. Push it onto the bridge's hooks queue in the same transaction
// as the failure's writes (delete, failed_jobs, batch counters, unique
// lock).
func FailureHooksPayload(f Failure, o Options) ([]byte, error) {
	if _, err := payload.Parse(f.Payload); err != nil {
		return nil, fmt.Errorf("bridgeproto: the failed job's payload: %w", err)
	}
	if f.ExceptionClass == "" {
		return nil, errors.New("bridgeproto: a failure needs its exception class")
	}
	if err := checkNames(f.BatchCallbacks, AfterFailureOrder, "after a failure"); err != nil {
		return nil, err
	}
	cmd := phpserialize.Object(RunFailureHooksClass,
		phpserialize.Public("payload", phpserialize.Bytes(f.Payload)),
		phpserialize.Public("connectionName", nullableString(f.Connection)),
		phpserialize.Public("queueName", nullableString(f.Queue)),
		phpserialize.Public("jobId", jobID(f.JobID)),
		phpserialize.Public("attempts", phpserialize.Int(f.Attempts)),
		phpserialize.Public("exceptionClass", phpserialize.String(f.ExceptionClass)),
		phpserialize.Public("exceptionMessage", phpserialize.String(f.ExceptionMessage)),
		phpserialize.Public("batchCallbacks", stringList(f.BatchCallbacks)),
		phpserialize.Public("tries", phpserialize.Int(1)),
	)
	return build(cmd, o)
}

// BatchCallbacks are the callbacks (and events) of one batch that a Go
// worker's update of its job_batches row triggered (RunBatchCallbacks).
type BatchCallbacks struct {
	BatchID string
	// Which names them (AfterSuccess, AfterFailure); PHP runs them in
	// Laravel's order whatever the order here.
	Which []string
	// ExceptionClass and ExceptionMessage are the failure's exception after
	// a failure (as in Failure); both "" after a success.
	ExceptionClass, ExceptionMessage string
}

// BatchCallbacksPayload builds the jobs.payload of a RunBatchCallbacks job,
// as dispatch() of that job writes it on the app's Laravel version. A
// failure of a job that has failure hooks of its own names its batch
// callbacks in FailureHooksPayload instead (one job, Laravel's order).
func BatchCallbacksPayload(b BatchCallbacks, o Options) ([]byte, error) {
	if b.BatchID == "" {
		return nil, errors.New("bridgeproto: batch callbacks need the batch id")
	}
	if len(b.Which) == 0 {
		return nil, errors.New("bridgeproto: no batch callbacks to run")
	}
	failure := b.ExceptionClass != ""
	order, after := AfterSuccessOrder, "after a success (no exception)"
	if failure {
		order, after = AfterFailureOrder, "after a failure"
	}
	if err := checkNames(b.Which, order, after); err != nil {
		return nil, err
	}
	exClass, exMessage := phpserialize.Null(), phpserialize.Null()
	if failure {
		exClass, exMessage = phpserialize.String(b.ExceptionClass), phpserialize.String(b.ExceptionMessage)
	} else if b.ExceptionMessage != "" {
		return nil, errors.New("bridgeproto: an exception message without its class")
	}
	cmd := phpserialize.Object(RunBatchCallbacksClass,
		phpserialize.Public("batchId", phpserialize.String(b.BatchID)),
		phpserialize.Public("callbacks", stringList(b.Which)),
		phpserialize.Public("exceptionClass", exClass),
		phpserialize.Public("exceptionMessage", exMessage),
		phpserialize.Public("tries", phpserialize.Int(1)),
	)
	return build(cmd, o)
}

// build writes the payload dispatch() writes for a hook job: its tries
// (1) become maxTries; everything else is null or the default.
func build(cmd *phpserialize.Value, o Options) ([]byte, error) {
	shape, err := ShapeFor(o.LaravelVersion)
	if err != nil {
		return nil, err
	}
	return payload.BuildObjectPayload(cmd, payload.BuildOptions{Shape: shape, Now: o.Now, UUID: o.UUID, Carried: o.Carried})
}

func checkNames(names, allowed []string, after string) error {
	seen := map[string]bool{}
	for _, n := range names {
		if !slices.Contains(allowed, n) {
			return fmt.Errorf("bridgeproto: no batch callback %q %s; want %s", n, after, strings.Join(allowed, ", "))
		}
		if seen[n] {
			return fmt.Errorf("bridgeproto: batch callback %q named twice", n)
		}
		seen[n] = true
	}
	return nil
}

func nullableString(s string) *phpserialize.Value {
	if s == "" {
		return phpserialize.Null()
	}
	return phpserialize.String(s)
}

// jobID writes a numeric id as PHP's DatabaseJob reports it (an int),
// another (a Redis job's) as a string.
func jobID(id string) *phpserialize.Value {
	if id == "" {
		return phpserialize.Null()
	}
	if n, err := strconv.ParseInt(id, 10, 64); err == nil && strconv.FormatInt(n, 10) == id {
		return phpserialize.Int(n)
	}
	return phpserialize.String(id)
}

func stringList(items []string) *phpserialize.Value {
	vals := make([]*phpserialize.Value, len(items))
	for i, s := range items {
		vals[i] = phpserialize.String(s)
	}
	return phpserialize.List(vals...)
}
