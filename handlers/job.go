package handlers

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/laraworker/laraworker/payload"
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

	encrypter *payload.Encrypter
	once      sync.Once
	command   *payload.Command
	cmdErr    error

	mu       sync.Mutex
	decision Decision

	class  Class
	lookup ModelLookup
}

// NewJob builds a Job; the worker calls it for each reserved row. enc may
// be nil when no APP_KEY is configured.
func NewJob(id int64, queue string, attempts int64, p *payload.Payload, enc *payload.Encrypter, opts ...JobOption) *Job {
	j := &Job{
		ID: id, UUID: p.UUID, Queue: queue, Attempts: attempts,
		DisplayName: p.Name(), Payload: p, encrypter: enc,
	}
	for _, o := range opts {
		o(j)
	}
	return j
}

// Command returns data.command decoded (decrypted when it is encrypted).
// It is decoded once, on first use.
func (j *Job) Command() (*payload.Command, error) {
	j.once.Do(func() {
		j.command, j.cmdErr = payload.DecodeCommand(j.Payload, j.encrypter)
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

// ReleaseError, returned by a handler, releases the job after Delay (the
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
