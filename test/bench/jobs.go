package bench

import (
	"bytes"
	"context"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/store/database"
)

// jobTemplate is the payload `dispatch(new BenchNoopJob)` writes; every
// benchmark job is a copy with its own uuid.
type jobTemplate struct {
	raw  []byte
	uuid []byte
}

func newJobTemplate() (jobTemplate, error) { return newJobTemplateFor(benchClass) }

// newJobTemplateFor is the payload dispatching a job of class writes.
func newJobTemplateFor(class string) (jobTemplate, error) {
	raw, err := payload.BuildObjectPayload(payload.NewCommand(class, nil, payload.Dispatch{}), payload.BuildOptions{})
	if err != nil {
		return jobTemplate{}, err
	}
	p, err := payload.Parse(raw)
	if err != nil {
		return jobTemplate{}, err
	}
	return jobTemplate{raw: raw, uuid: []byte(p.UUID)}, nil
}

// payload is the template with a fresh uuid (same length, so a plain
// replacement of the 36 bytes).
func (t jobTemplate) payload() ([]byte, error) {
	id, err := payload.NewUUID()
	if err != nil {
		return nil, err
	}
	return bytes.Replace(t.raw, t.uuid, []byte(id), 1), nil
}

// pushItems refills items with n fresh jobs on queue default.
func (t jobTemplate) pushItems(items []jobqueue.PushItem, n int) ([]jobqueue.PushItem, error) {
	items = items[:0]
	for range n {
		raw, err := t.payload()
		if err != nil {
			return nil, err
		}
		items = append(items, jobqueue.PushItem{Queue: "default", Payload: raw})
	}
	return items, nil
}

// countRows counts a table's rows.
func countRows(ctx context.Context, q *database.Queue, table string) (int, error) {
	var n int
	err := q.DB().QueryRowContext(ctx, "select count(*) from "+q.Dialect().Quote(table)).Scan(&n)
	return n, err
}
