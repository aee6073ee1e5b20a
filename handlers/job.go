package handlers

import (
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/rs/zerolog"
)

// Job is one reserved row of the jobs table as a handler sees it.
type Job struct {
	ID          int64
	UUID        string
	Queue       string
	Attempts    int64
	DisplayName string
	// Payload is the decoded payload; Payload.Raw holds its exact bytes.
	Payload *payload.Payload

	env     Env
	once    sync.Once
	command *payload.Command
	cmdErr  error

	mu       sync.Mutex
	decision Decision

	class  Class
	lookup ModelLookup

	// logCtx is the payload's Laravel Context once read (readContext);
	// a pointer, so a job without one pays a word for it.
	logCtx atomic.Pointer[jobContext]
}

// jobContext is a job's Laravel Context as read.
type jobContext struct {
	ctx *payload.LogContext
	err error
	// extra is the visible data as the job's log lines carry it; nil
	// when there is none.
	extra []byte
}

// noContext is every job's without illuminate:log:context.
var noContext = &jobContext{}

// Env is what a worker hands every job besides its row: the key to
// decrypt commands, its logger and the app. Every field may be zero.
type Env struct {
	// Encrypter decrypts ShouldBeEncrypted commands; nil when no APP_KEY
	// is configured.
	Encrypter *payload.Encrypter
	// Logger is the worker's logger.
	Logger zerolog.Logger
	// App is the Laravel app the jobs come from, if the worker knows it.
	App *App
}

// App is what a handler may need of the Laravel app beyond its job: the
// configuration the worker resolved (secrets stay appconfig.Secret values,
// which never print) and a pool on the app's database.
type App struct {
	Config appconfig.Config
	DB     *sql.DB
}

// NewJob builds a Job; the worker calls it for each reserved row.
func NewJob(id int64, queue string, attempts int64, p *payload.Payload, env Env, opts ...JobOption) *Job {
	j := &Job{
		ID: id, UUID: p.UUID, Queue: queue, Attempts: attempts,
		DisplayName: p.Name(), Payload: p, env: env,
	}
	for _, o := range opts {
		o(j)
	}
	return j
}

// Logger is the worker's logger with this job's uuid, class, queue and
// attempt on every line, and the visible data of Laravel's Context the
// job was dispatched with under "extra", where Laravel's logs (Monolog's
// JSON) carry it. The hidden data is never logged.
func (j *Job) Logger() *zerolog.Logger {
	c := j.env.Logger.With().Str("uuid", j.UUID).Str("class", j.DisplayName).Str("queue", j.Queue).
		Int64("attempt", j.Attempts)
	if extra := j.LogExtra(); extra != nil {
		c = c.RawJSON("extra", extra)
	}
	l := c.Logger()
	return &l
}

// LogContext is Laravel's Context (11+) the job was dispatched with:
// what the dispatching code put there with Context::add (Data) and
// Context::addHidden (Hidden), as PHP hydrates it for the job. Nil (and
// no error) when the payload carries none. An error names the value PHP
// could not unserialize either. Read once, on first use.
func (j *Job) LogContext() (*payload.LogContext, error) {
	c := j.readContext()
	return c.ctx, c.err
}

// LogExtra is the visible Context data as one JSON object (each value as
// payload.ReadableJSON renders it): what Logger adds as "extra". Nil when
// there is none, or it cannot be read.
func (j *Job) LogExtra() []byte { return j.readContext().extra }

// readContext reads the Context once; two goroutines asking at once may
// both read it, and the first to store wins.
func (j *Job) readContext() *jobContext {
	if c := j.logCtx.Load(); c != nil {
		return c
	}
	c := noContext
	if j.Payload != nil && j.Payload.Extra[payload.ContextKey] != nil {
		c = &jobContext{}
		c.ctx, c.err = j.Payload.LogContext()
		if c.ctx != nil {
			c.extra, _ = c.ctx.DataJSON()
		}
	}
	if !j.logCtx.CompareAndSwap(nil, c) {
		return j.logCtx.Load()
	}
	return c
}

// SentryTrace is the trace Sentry's Laravel SDK put into the payload at
// dispatch (sentry_trace_parent_data, sentry_baggage_data,
// sentry_publish_time); ok is false when it has none. Sentry's Go SDK
// continues it: sentry.ContinueTrace(hub, t.TraceParent, t.Baggage).
func (j *Job) SentryTrace() (t payload.SentryTrace, ok bool) {
	if j.Payload == nil {
		return payload.SentryTrace{}, false
	}
	return j.Payload.SentryTrace()
}

// App is the Laravel app the job comes from (its resolved configuration
// and database), nil when the worker was not given one.
func (j *Job) App() *App { return j.env.App }

// Command returns data.command decoded (decrypted when it is encrypted).
// It is decoded once, on first use.
func (j *Job) Command() (*payload.Command, error) {
	j.once.Do(func() {
		j.command, j.cmdErr = payload.DecodeCommand(j.Payload, j.env.Encrypter)
	})
	return j.command, j.cmdErr
}

// Decode fills out (a struct with `php:"name"` tags) from the command's
// properties.
func (j *Job) Decode(out any) error {
	cmd, err := j.Command()
	if err != nil {
		return err
	}
	return cmd.Decode(out)
}

// Models lists the Eloquent models (ModelIdentifiers) the command holds.
func (j *Job) Models() ([]payload.ModelAt, error) {
	cmd, err := j.Command()
	if err != nil {
		return nil, err
	}
	return cmd.Models(), nil
}

// Action is what a handler asked to happen to its job.
type Action int

const (
	// ActionNone: the worker decides from the handler's return value.
	ActionNone Action = iota
	// ActionDelete: done, remove the row (the default on success).
	ActionDelete
	// ActionRelease: put it back with a delay; the attempt counts.
	ActionRelease
	// ActionFail: move it to failed_jobs now, without retrying.
	ActionFail
)

// Decision is the action a handler chose with Release, Fail or Delete.
type Decision struct {
	Action Action
	Delay  time.Duration
	Err    error
}

// Release puts the job back on its queue after delay, as
// $this->release($delay) does. The attempt still counts.
func (j *Job) Release(delay time.Duration) {
	j.decide(Decision{Action: ActionRelease, Delay: delay})
}

// Fail moves the job to failed_jobs now, whatever tries are left, as
// $this->fail($e) does. A nil err is recorded as ManuallyFailedException.
func (j *Job) Fail(err error) {
	j.decide(Decision{Action: ActionFail, Err: err})
}

// Delete removes the job without running the rest of its logic, as
// $this->delete() does.
func (j *Job) Delete() {
	j.decide(Decision{Action: ActionDelete})
}

// decide keeps the first decision, as Laravel's job flags do: a deleted or
// failed job is not released afterwards.
func (j *Job) decide(d Decision) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.decision.Action == ActionNone {
		j.decision = d
	}
}

// Decision returns what the handler asked for, ActionNone if nothing.
func (j *Job) Decision() Decision {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.decision
}

// ReleaseError is returned by a handler to release the job after Delay (the
// exec handler's exit status 75 maps to it with the job's backoff).
type ReleaseError struct {
	Delay time.Duration
	// UseBackoff asks for Laravel's backoff instead of Delay.
	UseBackoff bool
}

func (e *ReleaseError) Error() string {
	if e.UseBackoff {
		return "release requested (backoff)"
	}
	return fmt.Sprintf("release requested (%s)", e.Delay)
}

// ErrNoHandler is returned by Registry.Lookup for classes nobody handles.
var ErrNoHandler = errors.New("handlers: no handler registered for this job class")
