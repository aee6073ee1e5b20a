package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/fleet"
)

// FailedTable reads failed_jobs: for the failed cache (the tail, the
// rolling pass over ids, the lowest id) and for the pages (a page of
// rows, one row, rows by uuid). Every statement is bounded: by primary
// key ranges or id lists with a limit, or by the uuid index; none scans
// the table.
type FailedTable struct {
	db     *sql.DB
	d      fleet.Dialect
	failed string // quoted
	loc    *time.Location
	// tags: the tail reads return whole the payloads holding models, for
	// their tags (see tags.go).
	tags bool
}

func newFailedTable(t Tables) *FailedTable {
	return &FailedTable{db: t.DB, d: t.Dialect, failed: t.Dialect.Quote(t.Failed), loc: t.Location}
}

func (s *FailedTable) col(name string) string { return s.d.Quote(name) }

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

// scannedFailed is one failed_jobs row as the failed cache reads it.
type scannedFailed struct {
	id       int64
	queue    string
	failedAt int64
	prefix   []byte
	models   []byte // the whole payload when it holds a model (tags on)
}

// after reads up to limit failed rows with id > after, in id order.
func (s *FailedTable) after(ctx context.Context, after int64, limit int) ([]scannedFailed, error) {
	models := "null"
	if s.tags {
		models = modelsCol(s.d, "payload")
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

// idsAfter lists existing failed ids > after (to find deleted ones).
func (s *FailedTable) idsAfter(ctx context.Context, after int64, limit int) ([]int64, error) {
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

func (s *FailedTable) minID(ctx context.Context) (int64, bool, error) {
	var id sql.NullInt64
	err := s.db.QueryRowContext(ctx, fmt.Sprintf("select min(%s) from %s", s.col("id"), s.failed)).Scan(&id)
	return id.Int64, id.Valid, err
}

// payloads reads whole payloads by id (rows whose prefix was not enough).
func (s *FailedTable) payloads(ctx context.Context, ids []int64) (map[int64][]byte, error) {
	return payloadsByID(ctx, s.db, s.d, s.failed, ids)
}

// unixOf reads failed_at: text in APP_TIMEZONE ('Y-m-d H:i:s') or a
// driver's time.Time whose wall clock is that text.
func (s *FailedTable) unixOf(v any) int64 {
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

const failedListCols = "%s, %s, %s, %s, %s, substr(%s, 1, %d), substr(%s, 1, 300)"

func (s *FailedTable) listSelect() string {
	return fmt.Sprintf(failedListCols, s.col("id"), s.col("uuid"), s.col("connection"), s.col("queue"), s.col("failed_at"),
		s.col("payload"), prefixLen, s.col("exception"))
}

func (s *FailedTable) query(ctx context.Context, cols, where string, args ...any) ([]FailedRow, error) {
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

// Page lists failed rows below before (newest first) through the primary
// key, with a payload prefix and the exception's start: ids, when not nil,
// restrict it; like, when given, filters on the exception text but reads
// at most scanIDs ids below before.
func (s *FailedTable) Page(ctx context.Context, before int64, ids []int64, like string, scanIDs int64, limit int) ([]FailedRow, error) {
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
	return s.query(ctx, s.listSelect(), where, args...)
}

func likeEscape(s string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(s)
}

// MaxID is the highest failed id (0 when the table is empty).
func (s *FailedTable) MaxID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	err := s.db.QueryRowContext(ctx, fmt.Sprintf("select max(%s) from %s", s.col("id"), s.failed)).Scan(&id)
	return id.Int64, err
}

// Row reads one whole failed row; ok is false when it is gone.
func (s *FailedTable) Row(ctx context.Context, id int64) (FailedRow, bool, error) {
	cols := fmt.Sprintf("%s, %s, %s, %s, %s, %s, %s", s.col("id"), s.col("uuid"), s.col("connection"), s.col("queue"),
		s.col("failed_at"), s.col("payload"), s.col("exception"))
	rows, err := s.query(ctx, cols, s.col("id")+" = ?", id)
	if err != nil || len(rows) == 0 {
		return FailedRow{}, false, err
	}
	return rows[0], true, nil
}

// ByUUIDs reads the failed rows (list columns) of uuids, through
// failed_jobs' uuid index; uuids not there are left out.
func (s *FailedTable) ByUUIDs(ctx context.Context, uuids []string) (map[string]FailedRow, error) {
	out := map[string]FailedRow{}
	for len(uuids) > 0 {
		n := min(len(uuids), 500)
		args := make([]any, n)
		for i, u := range uuids[:n] {
			args[i] = u
		}
		rows, err := s.query(ctx, s.listSelect(), s.col("uuid")+" in ("+placeholders(n)+")", args...)
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

// UUIDs maps ids to uuids (what queue:retry and queue:forget take); ids
// not there are left out.
func (s *FailedTable) UUIDs(ctx context.Context, ids []int64) (map[int64]string, error) {
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
