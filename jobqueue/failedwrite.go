package jobqueue

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// FailedWrite is a store's write of one job's failed_jobs row, with the
// failure's parked hook job when there are hooks, through a Repository,
// for stores whose job leaves another server than the app's database
// (Redis, beanstalkd): a try whose commit's answer was lost is retried
// without writing the row twice.
type FailedWrite struct {
	// UUID is the failed_jobs row written, or meant to be written when
	// Sure is false (its commit's answer was lost).
	UUID string
	Sure bool
	// Hook is the failure's parked hook job (Hooks.Failure) as written with
	// the row, HookUUID its payload's uuid and HookID its id (0 when
	// unknown: that write's answer was lost and no lookup found it).
	Hook     []byte
	HookUUID string
	HookID   int64
}

// Record writes the row once: a try after one whose answer was lost looks
// the row up first, and so its hook job. park is how long the hook job
// waits before a worker may run it (the store's retry_after).
func (w *FailedWrite) Record(ctx context.Context, repo Repository, r JobRow, uuid, exception string, hooks *Hooks, park time.Duration) error {
	if w.Sure {
		return nil
	}
	if w.UUID != "" {
		f, err := repo.FindFailed(ctx, w.UUID)
		switch {
		case err == nil && f.UUID == w.UUID:
			w.Sure = true
			return w.findHook(ctx, repo)
		case err != nil && !errors.Is(err, ErrFailedJobNotFound):
			return err
		}
	}
	if hooks == nil || hooks.Failure == nil {
		stored, err := repo.RecordFailed(ctx, r.Queue, r.Payload, uuid, exception)
		w.UUID = stored
		if err != nil {
			return err
		}
		w.Sure = true
		return nil
	}
	if w.Hook == nil {
		raw, err := hooks.Failure(nil)
		if err != nil {
			return err
		}
		w.Hook, w.HookUUID = raw, payloadUUID(raw)
	}
	stored, id, err := repo.RecordFailedWithHook(ctx, r.Queue, r.Payload, uuid, exception, w.Hook, park)
	w.UUID = stored
	if err != nil {
		return err
	}
	w.HookID, w.Sure = id, true
	return nil
}

// findHook looks up the parked hook job written with a failed row whose
// commit's answer was lost. Not found (0), it stays parked until its delay
// is over, and the batch callbacks go in a job of their own.
func (w *FailedWrite) findHook(ctx context.Context, repo Repository) error {
	if w.Hook == nil || w.HookID != 0 || w.HookUUID == "" {
		return nil
	}
	id, err := repo.FindHookByUUID(ctx, w.HookUUID)
	w.HookID = id
	return err
}

// payloadUUID is a payload's "uuid" ("" when it has none).
func payloadUUID(raw []byte) string {
	var p struct {
		UUID string `json:"uuid"`
	}
	_ = json.Unmarshal(raw, &p)
	return p.UUID
}
