package pulse

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// Storage writes batches to Pulse's tables as DatabaseStorage::store
// does: the entries that are not bucket-only into pulse_entries, and for
// every aggregation of every entry, per period, a pre-aggregated row
// upserted into pulse_aggregates on its unique key (bucket, period,
// type, aggregate, key_hash), all in one transaction.
type Storage struct {
	db      *sqldb.DB
	engine  string // mysql (MariaDB too), pgsql or sqlite
	entries string // table names, with the connection's prefix
	aggs    string
	values  string
	chunk   int
	keep    time.Duration
	now     func() time.Time
}

// periods are Pulse's, in minutes: 1 hour, 6 hours, 24 hours, 7 days. A
// period in minutes divides Unix seconds into its buckets, so each period
// has 60 buckets (60 s for the hour, 168 min for the week).
var periods = []int64{60, 360, 1440, 10080}

// aggregateOrder is the order DatabaseStorage upserts the aggregations.
var aggregateOrder = []string{aggCount, aggMin, aggMax, aggSum, aggAvg}

// NewStorage writes Pulse's tables on pool, a pool on the database
// connection cfg describes (its driver and table prefix are Pulse's).
func NewStorage(ctx context.Context, cfg appconfig.Config, pool *sql.DB, s Settings, now func() time.Time) (*Storage, error) {
	// Pulse's transaction(…, 3): three tries on a deadlock.
	db, err := sqldb.Open(ctx, cfg, sqldb.Options{DB: pool, Retry: sqldb.RetryPolicy{MaxAttempts: 3, BaseDelay: 5 * time.Millisecond, MaxDelay: 100 * time.Millisecond}})
	if err != nil {
		return nil, err
	}
	engine := db.Dialect.Name()
	if engine == appconfig.EngineMariaDB {
		engine = appconfig.EngineMySQL
	}
	if now == nil {
		now = time.Now
	}
	p := cfg.TablePrefix
	return &Storage{db: db, engine: engine, entries: p + "pulse_entries", aggs: p + "pulse_aggregates", values: p + "pulse_values",
		chunk: max(s.Chunk, 1), keep: s.StorageKeep, now: now}, nil
}

// Tables are Pulse's tables as Storage writes them (with the prefix).
func (s *Storage) Tables() (entries, aggregates, values string) { return s.entries, s.aggs, s.values }

// aggRow is one pre-aggregated pulse_aggregates row.
type aggRow struct {
	bucket, period int64
	typ, key       string
	value          float64
	count          int64 // avg only
}

// Ingest writes the batch in one transaction.
func (s *Storage) Ingest(ctx context.Context, entries []Entry) error {
	now := s.now().Unix()
	var rows []Entry
	for _, e := range entries {
		if !e.OnlyBuckets {
			rows = append(rows, e)
		}
	}
	aggs := make(map[string][]aggRow, len(aggregateOrder))
	for _, agg := range aggregateOrder {
		aggs[agg] = preaggregate(entries, agg, now)
	}
	return s.db.InTx(ctx, func(tx *sql.Tx, _ int) error {
		for c := range slices.Chunk(rows, s.chunk) {
			if err := s.insertEntries(ctx, tx, c); err != nil {
				return err
			}
		}
		for _, agg := range aggregateOrder {
			for c := range slices.Chunk(aggs[agg], s.chunk) {
				if err := s.upsert(ctx, tx, agg, c); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// preaggregate folds the entries that carry agg into one row per type,
// period, bucket and key, skipping periods the entry is already too old
// for (a trim would delete the row).
func preaggregate(entries []Entry, agg string, now int64) []aggRow {
	index := map[string]int{}
	var rows []aggRow
	for _, e := range entries {
		if !slices.Contains(e.Aggregations, agg) {
			continue
		}
		var v float64
		if e.Value != nil {
			v = float64(*e.Value)
		}
		for _, period := range periods {
			if e.Timestamp < now-period*60 {
				continue
			}
			bucket := floorDiv(e.Timestamp, period) * period
			k := fmt.Sprintf("%s:%d:%d:%s", e.Type, period, bucket, e.Key)
			i, seen := index[k]
			if !seen {
				index[k] = len(rows)
				rows = append(rows, aggRow{bucket: bucket, period: period, typ: e.Type, key: e.Key, value: first(agg, v), count: 1})
				continue
			}
			rows[i] = combine(agg, rows[i], v)
		}
	}
	return rows
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// first is an aggregate's value for its first entry.
func first(agg string, v float64) float64 {
	if agg == aggCount {
		return 1
	}
	return v
}

// combine adds one entry's value to a pre-aggregated row.
func combine(agg string, r aggRow, v float64) aggRow {
	switch agg {
	case aggCount:
		r.value++
	case aggMin:
		r.value = min(r.value, v)
	case aggMax:
		r.value = max(r.value, v)
	case aggSum:
		r.value += v
	case aggAvg:
		r.value = (r.value*float64(r.count) + v) / float64(r.count+1)
		r.count++
	}
	return r
}

// insertEntries inserts pulse_entries rows; on SQLite with the key_hash
// Pulse computes there (md5 hex), elsewhere the database generates it.
func (s *Storage) insertEntries(ctx context.Context, tx *sql.Tx, entries []Entry) error {
	cols := []string{"timestamp", "type", "key", "value"}
	if s.engine == appconfig.EngineSQLite {
		cols = append(cols, "key_hash")
	}
	args := make([]any, 0, len(entries)*len(cols))
	for _, e := range entries {
		var value any
		if e.Value != nil {
			value = *e.Value
		}
		args = append(args, e.Timestamp, e.Type, e.Key, value)
		if s.engine == appconfig.EngineSQLite {
			args = append(args, md5Hex(e.Key))
		}
	}
	_, err := tx.ExecContext(ctx, s.db.Dialect.Rebind(s.insertSQL(s.entries, cols, len(entries))), args...)
	return err
}

// upsert writes pre-aggregated rows of one aggregation.
func (s *Storage) upsert(ctx context.Context, tx *sql.Tx, agg string, rows []aggRow) error {
	cols := []string{"bucket", "period", "type", "aggregate", "key", "value"}
	if agg == aggAvg {
		cols = append(cols, "count")
	}
	if s.engine == appconfig.EngineSQLite {
		cols = append(cols, "key_hash")
	}
	args := make([]any, 0, len(rows)*len(cols))
	for _, r := range rows {
		var value any = int64(r.value)
		if agg == aggAvg {
			value = r.value
		}
		args = append(args, r.bucket, r.period, r.typ, agg, r.key, value)
		if agg == aggAvg {
			args = append(args, r.count)
		}
		if s.engine == appconfig.EngineSQLite {
			args = append(args, md5Hex(r.key))
		}
	}
	query := s.insertSQL(s.aggs, cols, len(rows)) + s.onConflict(agg)
	_, err := tx.ExecContext(ctx, s.db.Dialect.Rebind(query), args...)
	return err
}

// insertSQL is a multi-row insert with '?' placeholders.
func (s *Storage) insertSQL(table string, cols []string, n int) string {
	q := s.db.Dialect.Quote
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = q(c)
	}
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	return fmt.Sprintf("insert into %s (%s) values %s", q(table), strings.Join(quoted, ", "),
		strings.TrimSuffix(strings.Repeat(row+", ", n), ", "))
}

// onConflict is the upsert's update for agg, as DatabaseStorage's
// upsertCount/Min/Max/Sum/Avg write it for each engine.
func (s *Storage) onConflict(agg string) string {
	if s.engine == appconfig.EngineMySQL {
		return " on duplicate key update " + mysqlUpdates[agg]
	}
	q := s.db.Dialect.Quote
	old := func(col string) string { return q(s.aggs) + "." + q(col) }
	neu := func(col string) string { return `"excluded".` + q(col) }
	least, greatest := "least", "greatest"
	if s.engine == appconfig.EngineSQLite {
		least, greatest = "min", "max"
	}
	var set string
	switch agg {
	case aggCount, aggSum:
		set = fmt.Sprintf(`"value" = %s + %s`, old("value"), neu("value"))
	case aggMin:
		set = fmt.Sprintf(`"value" = %s(%s, %s)`, least, old("value"), neu("value"))
	case aggMax:
		set = fmt.Sprintf(`"value" = %s(%s, %s)`, greatest, old("value"), neu("value"))
	case aggAvg:
		set = fmt.Sprintf(`"value" = (%s * %s + (%s * %s)) / (%s + %s), "count" = %s + %s`,
			old("value"), old("count"), neu("value"), neu("count"), old("count"), neu("count"), old("count"), neu("count"))
	}
	return ` on conflict ("bucket", "period", "type", "aggregate", "key_hash") do update set ` + set
}

// mysqlUpdates are the ON DUPLICATE KEY UPDATE clauses on MySQL and
// MariaDB (values() reads the row the insert proposed).
var mysqlUpdates = map[string]string{
	aggCount: "`value` = `value` + values(`value`)",
	aggSum:   "`value` = `value` + values(`value`)",
	aggMin:   "`value` = least(`value`, values(`value`))",
	aggMax:   "`value` = greatest(`value`, values(`value`))",
	aggAvg:   "`value` = (`value` * `count` + (values(`value`) * values(`count`))) / (`count` + values(`count`)), `count` = `count` + values(`count`)",
}

// Trim deletes entries and values older than the storage keeps them
// (pulse.storage.trim.keep, at most 7 days) and each period's aggregates
// from buckets that period no longer shows, as DatabaseStorage::trim.
func (s *Storage) Trim(ctx context.Context) error {
	q := s.db.Dialect.Quote
	now := s.now()
	before := now.Add(-s.keep).Unix()
	for _, table := range []string{s.values, s.entries} {
		if _, err := s.db.Pool.ExecContext(ctx, s.db.Dialect.Rebind(fmt.Sprintf("delete from %s where %s <= ?", q(table), q("timestamp"))), before); err != nil {
			return err
		}
	}
	rows, err := s.db.Pool.QueryContext(ctx, fmt.Sprintf("select distinct %s from %s", q("period"), q(s.aggs)))
	if err != nil {
		return err
	}
	var found []int64
	for rows.Next() {
		var p int64
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return err
		}
		found = append(found, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	del := s.db.Dialect.Rebind(fmt.Sprintf("delete from %s where %s = ? and %s <= ?", q(s.aggs), q("period"), q("bucket")))
	for _, p := range found {
		if _, err := s.db.Pool.ExecContext(ctx, del, p, max(now.Unix()-p*60, before)); err != nil {
			return err
		}
	}
	return nil
}
