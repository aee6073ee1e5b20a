package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/laraworker/laraworker/internal/fleet"
)

// jobTable reads a database queue's jobs table. Every statement it runs
// is bounded: by primary key ranges or id lists with a limit, or by the
// queue index; none scans the whole table.
type jobTable struct {
	db   *sql.DB
	d    fleet.Dialect
	jobs string // quoted
	// tags: the tail reads return whole the payloads holding models, for
	// their tags (see tags.go).
	tags bool
}

func (s *jobTable) col(name string) string { return s.d.Quote(name) }

// jobCols are the columns the job cache keeps, plus a payload prefix.
func (s *jobTable) jobCols(withPrefix bool) string {
	c := fmt.Sprintf("%s, %s, %s, %s, %s, %s", s.col("id"), s.col("queue"), s.col("attempts"),
		s.col("reserved_at"), s.col("available_at"), s.col("created_at"))
	if withPrefix {
		c += fmt.Sprintf(", substr(%s, 1, %d)", s.col("payload"), prefixLen)
	}
	return c
}

// scannedJob is one row as read, before it is interned.
type scannedJob struct {
	id, attempts, available, created int64
	reserved                         sql.NullInt64
	queue                            string
	prefix                           []byte
	// models is the whole payload when it holds a model (withModels).
	models []byte
}

func (s *jobTable) query(ctx context.Context, withPrefix, withModels bool, where string, args ...any) ([]scannedJob, error) {
	cols := s.jobCols(withPrefix)
	withModels = withModels && withPrefix && s.tags
	if withModels {
		cols += ", " + modelsCol(s.d, "payload")
	}
	rows, err := s.db.QueryContext(ctx, s.d.Rebind("select "+cols+" from "+s.jobs+" where "+where), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []scannedJob
	for rows.Next() {
		var j scannedJob
		dest := []any{&j.id, &j.queue, &j.attempts, &j.reserved, &j.available, &j.created}
		if withPrefix {
			dest = append(dest, &j.prefix)
		}
		if withModels {
			dest = append(dest, &j.models)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// after reads up to limit rows with id > after, in id order; with
// models, the payloads that hold models too.
func (s *jobTable) after(ctx context.Context, after int64, limit int, models bool) ([]scannedJob, error) {
	return s.query(ctx, true, models, fmt.Sprintf("%s > ? order by %s limit %d", s.col("id"), s.col("id"), limit), after)
}

// byID reads the rows among ids that still exist (no prefix: a row's
// payload never changes).
func (s *jobTable) byID(ctx context.Context, ids []int64) ([]scannedJob, error) {
	var out []scannedJob
	for len(ids) > 0 {
		n := min(len(ids), 500)
		part, err := s.query(ctx, false, false, s.col("id")+" in ("+placeholders(n)+")", int64Args(ids[:n])...)
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
		ids = ids[n:]
	}
	return out, nil
}

// minID is the lowest id of a queue, through Laravel's queue index; ok
// is false when the queue has no rows.
func (s *jobTable) minID(ctx context.Context, queue string) (int64, bool, error) {
	var id sql.NullInt64
	err := s.db.QueryRowContext(ctx, s.d.Rebind(fmt.Sprintf("select min(%s) from %s where %s = ?",
		s.col("id"), s.jobs, s.col("queue"))), queue).Scan(&id)
	return id.Int64, id.Valid, err
}

// payloads reads whole payloads by id (rows whose prefix was not enough).
func (s *jobTable) payloads(ctx context.Context, ids []int64) (map[int64][]byte, error) {
	return payloadsByID(ctx, s.db, s.d, s.jobs, ids)
}

// rows reads the rows of ids (with a payload prefix) in the caller's
// order, leaving out those gone.
func (s *jobTable) rows(ctx context.Context, ids []int64) ([]JobRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.query(ctx, true, false, s.col("id")+" in ("+placeholders(len(ids))+")", int64Args(ids)...)
	if err != nil {
		return nil, err
	}
	byID := map[int64]scannedJob{}
	for _, r := range rows {
		byID[r.id] = r
	}
	var out []JobRow
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			out = append(out, toJobRow(r))
		}
	}
	return out, nil
}

func toJobRow(r scannedJob) JobRow {
	j := JobRow{ID: r.id, Queue: r.queue, Attempts: r.attempts, AvailableAt: time.Unix(r.available, 0),
		CreatedAt: time.Unix(r.created, 0), Payload: r.prefix, UUID: fleet.UUIDOf(r.prefix)}
	if r.reserved.Valid {
		t := time.Unix(r.reserved.Int64, 0)
		j.ReservedAt = &t
	}
	j.Class, _ = fleet.ClassOf(r.prefix)
	return j
}

// row reads one whole row; ok is false when it is gone.
func (s *jobTable) row(ctx context.Context, id int64) (JobRow, bool, error) {
	rows, err := s.db.QueryContext(ctx, s.d.Rebind("select "+s.jobCols(false)+", "+s.col("payload")+" from "+s.jobs+" where "+s.col("id")+" = ?"), id)
	if err != nil {
		return JobRow{}, false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return JobRow{}, false, rows.Err()
	}
	var r scannedJob
	if err := rows.Scan(&r.id, &r.queue, &r.attempts, &r.reserved, &r.available, &r.created, &r.prefix); err != nil {
		return JobRow{}, false, err
	}
	j := toJobRow(r)
	if j.Class == "" {
		j.Class = classOfPayload(r.prefix)
	}
	return j, true, nil
}
