package dashboard

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/laraworker/laraworker/fleet"
)

// source reads Laravel's tables for the dashboard. Every statement it
// runs is bounded: by primary key ranges or id lists with a limit, or by
// the queue index; none scans a whole table.
type source struct {
	db     *sql.DB
	d      fleet.Dialect
	jobs   string // quoted
	failed string // quoted
	loc    *time.Location
	// tags: the tail reads return whole the payloads holding models, for
	// their tags (see tags.go).
	tags bool
}

// Tables says where the dashboard reads Laravel's database queue.
type Tables struct {
	// DB is the pool on the queue's database and Dialect its engine's SQL
	// (sqldb.Dialect).
	DB      *sql.DB
	Dialect fleet.Dialect
	// Jobs and Failed are the jobs and failed_jobs tables (with the
	// connection's table prefix).
	Jobs, Failed string
	// Location is the app's timezone (failed_at is written in it).
	Location *time.Location
	// RetryAfter is the connection's retry_after.
	RetryAfter time.Duration
}

func newSource(t Tables) *source {
	return &source{db: t.DB, d: t.Dialect, jobs: t.Dialect.Quote(t.Jobs), failed: t.Dialect.Quote(t.Failed), loc: t.Location}
}

// prefixLen is how much of a payload the caches read: enough for the
// uuid and displayName Laravel writes first.
const prefixLen = 400

func (s *source) col(name string) string { return s.d.Quote(name) }

// jobCols are the columns the job cache keeps, plus a payload prefix.
func (s *source) jobCols(withPrefix bool) string {
	c := fmt.Sprintf("%s, %s, %s, %s, %s, %s", s.col("id"), s.col("queue"), s.col("attempts"),
		s.col("reserved_at"), s.col("available_at"), s.col("created_at"))
	if withPrefix {
		c += fmt.Sprintf(", substr(%s, 1, %d)", s.col("payload"), prefixLen)
	}
	return c
}

// modelsCol is the whole payload of a row whose command holds a model
// (its tags), null for the others.
func (s *source) modelsCol() string {
	return fmt.Sprintf("case when %s like '%%%s%%' then %s end", s.col("payload"), modelMarker, s.col("payload"))
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

func (s *source) queryJobs(ctx context.Context, withPrefix, withModels bool, where string, args ...any) ([]scannedJob, error) {
	cols := s.jobCols(withPrefix)
	withModels = withModels && withPrefix && s.tags
	if withModels {
		cols += ", " + s.modelsCol()
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

// jobsAfter reads up to limit rows with id > after, in id order; with
// models, the payloads that hold models too.
func (s *source) jobsAfter(ctx context.Context, after int64, limit int, models bool) ([]scannedJob, error) {
	return s.queryJobs(ctx, true, models, fmt.Sprintf("%s > ? order by %s limit %d", s.col("id"), s.col("id"), limit), after)
}

// jobsByID reads the rows among ids that still exist (no prefix: a row's
// payload never changes).
func (s *source) jobsByID(ctx context.Context, ids []int64) ([]scannedJob, error) {
	var out []scannedJob
	for len(ids) > 0 {
		n := min(len(ids), 500)
		part, err := s.queryJobs(ctx, false, false, s.col("id")+" in ("+placeholders(n)+")", int64Args(ids[:n])...)
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
		ids = ids[n:]
	}
	return out, nil
}

// minJobID is the lowest id of a queue, through Laravel's queue index;
// ok is false when the queue has no rows.
func (s *source) minJobID(ctx context.Context, queue string) (int64, bool, error) {
	var id sql.NullInt64
	err := s.db.QueryRowContext(ctx, s.d.Rebind(fmt.Sprintf("select min(%s) from %s where %s = ?",
		s.col("id"), s.jobs, s.col("queue"))), queue).Scan(&id)
	return id.Int64, id.Valid, err
}

// payloads reads whole payloads by id (rows whose prefix was not enough).
func (s *source) payloads(ctx context.Context, table string, ids []int64) (map[int64][]byte, error) {
	out := map[int64][]byte{}
	for len(ids) > 0 {
		n := min(len(ids), 200)
		rows, err := s.db.QueryContext(ctx, s.d.Rebind(fmt.Sprintf("select %s, %s from %s where %s in (%s)",
			s.col("id"), s.col("payload"), table, s.col("id"), placeholders(n))), int64Args(ids[:n])...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id int64
			var p []byte
			if err := rows.Scan(&id, &p); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = p
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		ids = ids[n:]
	}
	return out, nil
}

// scannedFailed is one failed_jobs row as the failed cache reads it.
type scannedFailed struct {
	id       int64
	queue    string
	failedAt int64
	prefix   []byte
	models   []byte // the whole payload when it holds a model (tags on)
}

// failedAfter reads up to limit failed rows with id > after, in id order.
func (s *source) failedAfter(ctx context.Context, after int64, limit int) ([]scannedFailed, error) {
	models := "null"
	if s.tags {
		models = s.modelsCol()
	}
	rows, err := s.db.QueryContext(ctx, s.d.Rebind(fmt.Sprintf("select %s, %s, %s, substr(%s, 1, %d), %s from %s where %s > ? order by %s limit %d",
		s.col("id"), s.col("queue"), s.col("failed_at"), s.col("payload"), prefixLen, models, s.failed, s.col("id"), s.col("id"), limit)), after)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []scannedFailed
	for rows.Next() {
		var f scannedFailed
		var at any
		if err := rows.Scan(&f.id, &f.queue, &at, &f.prefix, &f.models); err != nil {
			return nil, err
		}
		f.failedAt = s.unixOf(at)
		out = append(out, f)
	}
	return out, rows.Err()
}

// failedIDsAfter lists existing failed ids > after (to find deleted ones).
func (s *source) failedIDsAfter(ctx context.Context, after int64, limit int) ([]int64, error) {
	rows, err := s.db.QueryContext(ctx, s.d.Rebind(fmt.Sprintf("select %s from %s where %s > ? order by %s limit %d",
		s.col("id"), s.failed, s.col("id"), s.col("id"), limit)), after)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

func (s *source) minFailedID(ctx context.Context) (int64, bool, error) {
	var id sql.NullInt64
	err := s.db.QueryRowContext(ctx, fmt.Sprintf("select min(%s) from %s", s.col("id"), s.failed)).Scan(&id)
	return id.Int64, id.Valid, err
}

// unixOf reads failed_at: text in APP_TIMEZONE ('Y-m-d H:i:s') or a
// driver's time.Time whose wall clock is that text.
func (s *source) unixOf(v any) int64 {
	var text string
	switch x := v.(type) {
	case time.Time:
		text = x.Format(time.DateTime)
	case []byte:
		text = string(x)
	case string:
		text = x
	default:
		return 0
	}
	if len(text) > len(time.DateTime) {
		text = strings.Replace(text[:len(time.DateTime)], "T", " ", 1)
	}
	t, err := time.ParseInLocation(time.DateTime, text, s.loc)
	if err != nil {
		return 0
	}
	return t.Unix()
}

func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// JobRow is a jobs row as a page shows it.
type JobRow struct {
	ID          int64
	Queue       string
	Attempts    int64
	ReservedAt  *time.Time
	AvailableAt time.Time
	CreatedAt   time.Time
	UUID, Class string
	Payload     []byte // whole payload (detail) or a prefix (lists)
	Tags        []string
}

func (s *source) jobRows(ctx context.Context, ids []int64) ([]JobRow, error) {
	rows, err := s.jobsByIDWithPrefix(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := map[int64]scannedJob{}
	for _, r := range rows {
		byID[r.id] = r
	}
	var out []JobRow
	for _, id := range ids { // the caller's order
		if r, ok := byID[id]; ok {
			out = append(out, toJobRow(r))
		}
	}
	return out, nil
}

func (s *source) jobsByIDWithPrefix(ctx context.Context, ids []int64) ([]scannedJob, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return s.queryJobs(ctx, true, false, s.col("id")+" in ("+placeholders(len(ids))+")", int64Args(ids)...)
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

// jobByID reads one whole row; ok is false when it is gone.
func (s *source) jobByID(ctx context.Context, id int64) (JobRow, bool, error) {
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

// FailedRow is a failed_jobs row as a page shows it.
type FailedRow struct {
	ID         int64
	UUID       string
	Connection string
	Queue      string
	Class      string
	FailedAt   time.Time
	Payload    []byte // whole (detail) or a prefix (lists)
	Exception  string // whole (detail) or its start (lists)
	Tags       []string
}

const failedListCols = "%s, %s, %s, %s, %s, substr(%s, 1, %d), substr(%s, 1, 300)"

func (s *source) failedListSelect() string {
	return fmt.Sprintf(failedListCols, s.col("id"), s.col("uuid"), s.col("connection"), s.col("queue"), s.col("failed_at"),
		s.col("payload"), prefixLen, s.col("exception"))
}

func (s *source) queryFailed(ctx context.Context, cols, where string, args ...any) ([]FailedRow, error) {
	rows, err := s.db.QueryContext(ctx, s.d.Rebind("select "+cols+" from "+s.failed+" where "+where), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []FailedRow
	for rows.Next() {
		var f FailedRow
		var at any
		var exc []byte
		if err := rows.Scan(&f.ID, &f.UUID, &f.Connection, &f.Queue, &at, &f.Payload, &exc); err != nil {
			return nil, err
		}
		f.Exception = string(exc)
		f.FailedAt = time.Unix(s.unixOf(at), 0)
		if cl, ok := fleet.ClassOf(f.Payload); ok {
			f.Class = cl
		} else {
			f.Class = classOfPayload(f.Payload)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// failedPage lists failed rows below before (newest first) through the
// primary key: ids, when given, restrict it; like, when given, filters
// on the exception text but reads at most scanIDs ids below before.
func (s *source) failedPage(ctx context.Context, before int64, ids []int64, like string, scanIDs int64, limit int) ([]FailedRow, error) {
	where := s.col("id") + " < ?"
	args := []any{before}
	if ids != nil {
		if len(ids) == 0 {
			return nil, nil
		}
		where += " and " + s.col("id") + " in (" + placeholders(len(ids)) + ")"
		args = append(args, int64Args(ids)...)
	} else if like != "" {
		where += " and " + s.col("id") + " >= ?"
		args = append(args, before-scanIDs)
	}
	if like != "" {
		where += " and " + s.col("exception") + " like ? escape '!'"
		args = append(args, "%"+likeEscape(like)+"%")
	}
	where += fmt.Sprintf(" order by %s desc limit %d", s.col("id"), limit)
	return s.queryFailed(ctx, s.failedListSelect(), where, args...)
}

func likeEscape(s string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(s)
}

func (s *source) maxFailedID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	err := s.db.QueryRowContext(ctx, fmt.Sprintf("select max(%s) from %s", s.col("id"), s.failed)).Scan(&id)
	return id.Int64, err
}

// failedByID reads one whole failed row.
func (s *source) failedByID(ctx context.Context, id int64) (FailedRow, bool, error) {
	cols := fmt.Sprintf("%s, %s, %s, %s, %s, %s, %s", s.col("id"), s.col("uuid"), s.col("connection"), s.col("queue"),
		s.col("failed_at"), s.col("payload"), s.col("exception"))
	rows, err := s.queryFailed(ctx, cols, s.col("id")+" = ?", id)
	if err != nil || len(rows) == 0 {
		return FailedRow{}, false, err
	}
	return rows[0], true, nil
}

// failedByUUIDs reads the failed rows (list columns) of uuids, through
// failed_jobs' uuid index; uuids not there are left out.
func (s *source) failedByUUIDs(ctx context.Context, uuids []string) (map[string]FailedRow, error) {
	out := map[string]FailedRow{}
	for len(uuids) > 0 {
		n := min(len(uuids), 500)
		args := make([]any, n)
		for i, u := range uuids[:n] {
			args[i] = u
		}
		rows, err := s.queryFailed(ctx, s.failedListSelect(), s.col("uuid")+" in ("+placeholders(n)+")", args...)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.UUID] = r
		}
		uuids = uuids[n:]
	}
	return out, nil
}

// failedUUIDs maps ids to uuids (what queue:retry and queue:forget take).
func (s *source) failedUUIDs(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	for len(ids) > 0 {
		n := min(len(ids), 500)
		rows, err := s.db.QueryContext(ctx, s.d.Rebind(fmt.Sprintf("select %s, %s from %s where %s in (%s)",
			s.col("id"), s.col("uuid"), s.failed, s.col("id"), placeholders(n))), int64Args(ids[:n])...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id int64
			var uuid string
			if err := rows.Scan(&id, &uuid); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = uuid
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		ids = ids[n:]
	}
	return out, nil
}
