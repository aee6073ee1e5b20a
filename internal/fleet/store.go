package fleet

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/phparray"
)

// Store reads and writes laraworker's own tables. It is safe for
// concurrent use.
type Store struct {
	db     *sql.DB
	d      Dialect
	t      Tables
	schema *schemaCache
}

// Dialect is the little of an engine's SQL the store needs (sqldb.Dialect
// has it): the engine's name ("mysql", "pgsql" or "sqlite"), identifier
// quoting and the placeholder form.
type Dialect interface {
	Name() string
	Quote(ident string) string
	Rebind(query string) string
}

// NewStore works on db with dialect d and the tables t.
func NewStore(db *sql.DB, d Dialect, t Tables) *Store {
	return &Store{db: db, d: d, t: t, schema: &schemaCache{}}
}

// On is the store on an app's database with the default tables behind
// the connection's table prefix, where Laravel's query builder puts them
// for the bridge's PHP workers: laraworker_workers, or
// app_laraworker_workers with the prefix "app_".
func On(db *sql.DB, d Dialect, tablePrefix string) *Store {
	return NewStore(db, d, TablesWithPrefix(tablePrefix+"laraworker_"))
}

// Tables are the names the store works on.
func (s *Store) Tables() Tables { return s.t }

// Kinds of worker rows.
const (
	KindGo  = "go"
	KindPHP = "php"
)

// WorkerRow is one row of the workers table: one worker process.
type WorkerRow struct {
	ID          string // unique per process: "go:HOST:PID:STARTED"
	Kind        string // KindGo, or KindPHP for rows a PHP bridge writes
	Name        string // --name
	Host        string
	PID         int64
	Queues      []string
	Concurrency int64
	StartedAt   int64 // unix seconds
	LastSeenAt  int64
	StoppedAt   *int64 // set by a clean stop
	Done        int64
	Failed      int64
	Released    int64
	// Returned counts the jobs given back untouched to PHP workers (not
	// this worker's to run: middleware Go cannot apply, a key that does
	// not decrypt...); 0 for PHP workers, and on tables of an earlier
	// version until `laraworker tables` (or a Go worker's start) adds
	// the column.
	Returned    int64
	MemoryBytes int64
	Paused      bool
	PausedQs    []string
	Running     []RunningJob
	Version     string
}

// RunningJob is a job a worker holds, as its heartbeat reports it.
type RunningJob struct {
	ID      int64  `json:"id"`
	UUID    string `json:"uuid"`
	Class   string `json:"class"`
	Queue   string `json:"queue"`
	Attempt int    `json:"attempt"`
	Since   int64  `json:"since"` // unix seconds
}

// maxRunningReported bounds the running list one heartbeat writes.
const maxRunningReported = 500

var workerColumns = []string{"id", "kind", "name", "host", "pid", "queues", "concurrency", "started_at",
	"last_seen_at", "stopped_at", "jobs_done", "jobs_failed", "jobs_released", "memory_bytes", "paused",
	"paused_queues", "running", "version"}

// UpsertWorker writes w's row, creating it on the first heartbeat.
func (s *Store) UpsertWorker(ctx context.Context, w WorkerRow) error {
	running := w.Running
	if len(running) > maxRunningReported {
		running = running[:maxRunningReported]
	}
	args := []any{clip(w.ID, 191), clip(w.Kind, 16), clip(w.Name, 255), clip(w.Host, 255), w.PID, jsonList(w.Queues),
		w.Concurrency, w.StartedAt, w.LastSeenAt, w.StoppedAt, w.Done, w.Failed, w.Released, w.MemoryBytes,
		boolInt(w.Paused), jsonList(w.PausedQs), jsonOf(running), clip(w.Version, 64)}
	cols := workerColumns
	if ok, err := s.ReturnedColumn(ctx); err != nil {
		return err
	} else if ok {
		cols = append(slices.Clone(workerColumns), returnedColumn)
		args = append(args, w.Returned)
	}
	_, err := s.db.ExecContext(ctx, s.upsert(s.t.Workers, cols, []string{"id"}, cols[1:], false), args...)
	return err
}

// upsert renders an insert that updates the row when the key exists:
// with add, the update columns are added to (counters); else replaced.
func (s *Store) upsert(table string, cols, key, update []string, add bool) string {
	q := s.d.Quote
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = q(c)
	}
	b := fmt.Sprintf("insert into %s (%s) values (%s)", q(table), strings.Join(quoted, ", "),
		strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", "))
	sets := make([]string, len(update))
	mysql := s.d.Name() == "mysql"
	for i, c := range update {
		incoming := "excluded." + q(c)
		if mysql {
			incoming = "values(" + q(c) + ")"
		}
		if add {
			incoming = q(table) + "." + q(c) + " + " + incoming
			if mysql {
				incoming = q(c) + " + values(" + q(c) + ")"
			}
		}
		sets[i] = q(c) + " = " + incoming
	}
	if mysql {
		b += " on duplicate key update " + strings.Join(sets, ", ")
	} else {
		keys := make([]string, len(key))
		for i, k := range key {
			keys[i] = q(k)
		}
		b += " on conflict (" + strings.Join(keys, ", ") + ") do update set " + strings.Join(sets, ", ")
	}
	return s.d.Rebind(b)
}

// MarkStopped records a clean stop of worker id.
func (s *Store) MarkStopped(ctx context.Context, id string, at int64) error {
	_, err := s.db.ExecContext(ctx, s.d.Rebind(fmt.Sprintf("update %s set %s = ?, %s = ?, %s = ? where %s = ?",
		s.d.Quote(s.t.Workers), s.d.Quote("stopped_at"), s.d.Quote("last_seen_at"), s.d.Quote("running"), s.d.Quote("id"))),
		at, at, "[]", id)
	return err
}

// Workers returns every worker row, the most recently started first.
func (s *Store) Workers(ctx context.Context) ([]WorkerRow, error) {
	names := workerColumns
	returned, err := s.ReturnedColumn(ctx)
	if err != nil {
		return nil, err
	}
	if returned {
		names = append(slices.Clone(workerColumns), returnedColumn)
	}
	cols := make([]string, len(names))
	for i, c := range names {
		cols[i] = s.d.Quote(c)
	}
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf("select %s from %s order by %s desc, %s",
		strings.Join(cols, ", "), s.d.Quote(s.t.Workers), s.d.Quote("started_at"), s.d.Quote("id")))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []WorkerRow
	for rows.Next() {
		var (
			w                         WorkerRow
			queues, pausedQs, running string
			paused                    int64
			stopped                   sql.NullInt64
		)
		dest := []any{&w.ID, &w.Kind, &w.Name, &w.Host, &w.PID, &queues, &w.Concurrency, &w.StartedAt,
			&w.LastSeenAt, &stopped, &w.Done, &w.Failed, &w.Released, &w.MemoryBytes, &paused, &pausedQs,
			&running, &w.Version}
		if returned {
			dest = append(dest, &w.Returned)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if stopped.Valid {
			w.StoppedAt = &stopped.Int64
		}
		w.Paused = paused != 0
		// A row another program wrote with bad JSON keeps its other
		// columns; the bridge's PHP recorder writes these lists with
		// json_encode (a list with holes is an object).
		_ = phparray.Unmarshal([]byte(queues), &w.Queues)
		_ = phparray.Unmarshal([]byte(pausedQs), &w.PausedQs)
		_ = phparray.Unmarshal([]byte(running), &w.Running)
		out = append(out, w)
	}
	return out, rows.Err()
}

// Pause scopes.
const (
	ScopeWorker = "worker" // target: a worker row's id
	ScopeQueue  = "queue"  // target: a queue name
)

// Pause is one row of the pauses table.
type Pause struct {
	Scope, Target string
	CreatedAt     int64
}

// Pauses returns every pause request.
func (s *Store) Pauses(ctx context.Context) ([]Pause, error) {
	q := s.d.Quote
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf("select %s, %s, %s from %s order by %s, %s",
		q("scope"), q("target"), q("created_at"), q(s.t.Pauses), q("scope"), q("target")))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Pause
	for rows.Next() {
		var p Pause
		if err := rows.Scan(&p.Scope, &p.Target, &p.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// ErrBadScope rejects a pause scope other than ScopeWorker and ScopeQueue.
var ErrBadScope = errors.New("fleet: pause scope must be \"worker\" or \"queue\"")

// SetPause asks the workers to stop claiming: worker target, or every
// worker from queue target. Setting it twice is one request.
func (s *Store) SetPause(ctx context.Context, scope, target string, now time.Time) error {
	if scope != ScopeWorker && scope != ScopeQueue {
		return ErrBadScope
	}
	if target == "" || len(target) > 191 {
		return fmt.Errorf("fleet: pause target must have 1 to 191 bytes, got %d", len(target))
	}
	_, err := s.db.ExecContext(ctx, s.upsert(s.t.Pauses, []string{"scope", "target", "created_at"},
		[]string{"scope", "target"}, []string{"created_at"}, false), scope, target, now.Unix())
	return err
}

// ClearPause withdraws a pause request (resume).
func (s *Store) ClearPause(ctx context.Context, scope, target string) error {
	q := s.d.Quote
	_, err := s.db.ExecContext(ctx, s.d.Rebind(fmt.Sprintf("delete from %s where %s = ? and %s = ?",
		q(s.t.Pauses), q("scope"), q("target"))), scope, target)
	return err
}

// HistoryRow is the jobs of one queue and class the workers finished in
// one minute, with their runtimes and waits (the time from available_at
// to the start) when the workers measured them.
type HistoryRow struct {
	Minute                 int64 // unix seconds of the minute's start
	Queue, Class           string
	Done, Failed, Released int64
	Run, Wait              Histogram
}

var historyKey = []string{"minute", "queue", "class"}

// AddHistory adds the rows' counts to the stored ones (several workers
// report the same minute). Runtimes and waits are left out while the
// table lacks their columns (an earlier version's: `laraworker tables`
// adds them).
func (s *Store) AddHistory(ctx context.Context, rows []HistoryRow) error {
	if len(rows) == 0 {
		return nil
	}
	timings, err := s.TimingColumns(ctx)
	if err != nil {
		return err
	}
	counts := []string{"done", "failed", "released"}
	if timings {
		counts = append(counts, timingColumns...)
	}
	stmt := s.upsert(s.t.History, append(slices.Clone(historyKey), counts...), historyKey, counts, true)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, r := range rows {
		args := []any{r.Minute, clip(r.Queue, 191), clip(r.Class, 191), r.Done, r.Failed, r.Released}
		if timings {
			args = append(args, timingArgs(r.Run, r.Wait)...)
		}
		if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
			s.schema.forget() // a column dropped meanwhile is looked for again
			return err
		}
	}
	return tx.Commit()
}

// History returns the rows of minutes >= since, oldest first.
func (s *Store) History(ctx context.Context, since int64) ([]HistoryRow, error) {
	q := s.d.Quote
	rows, err := s.db.QueryContext(ctx, s.d.Rebind(fmt.Sprintf(
		"select %s, %s, %s, %s, %s, %s from %s where %s >= ? order by %s, %s, %s",
		q("minute"), q("queue"), q("class"), q("done"), q("failed"), q("released"), q(s.t.History),
		q("minute"), q("minute"), q("queue"), q("class"))), since)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []HistoryRow
	for rows.Next() {
		var r HistoryRow
		if err := rows.Scan(&r.Minute, &r.Queue, &r.Class, &r.Done, &r.Failed, &r.Released); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Retention bounds the tables: history minutes older than HistoryKeep,
// workers not seen for WorkerKeep and recent jobs older than RecentKeep
// are deleted by Prune.
const (
	HistoryKeep = 25 * time.Hour
	WorkerKeep  = 24 * time.Hour
	RecentKeep  = 24 * time.Hour
)

// Prune deletes history, worker and recent job rows past their retention.
func (s *Store) Prune(ctx context.Context, now time.Time) error {
	q := s.d.Quote
	for _, p := range []struct {
		table, column string
		keep          time.Duration
	}{{s.t.History, "minute", HistoryKeep}, {s.t.Workers, "last_seen_at", WorkerKeep}, {s.t.Recent, "finished_at", RecentKeep}} {
		if _, err := s.db.ExecContext(ctx, s.d.Rebind(fmt.Sprintf("delete from %s where %s < ?", q(p.table), q(p.column))),
			now.Add(-p.keep).Unix()); err != nil {
			return err
		}
	}
	return nil
}

func jsonList(v []string) string {
	if v == nil {
		v = []string{}
	}
	return jsonOf(v)
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return "[]"
	}
	return string(b)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// clip cuts s to at most n bytes on a rune boundary, so a long class or
// queue name fits its column instead of failing the write.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
