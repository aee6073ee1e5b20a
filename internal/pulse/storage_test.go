package pulse

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/pulse/pulsetest"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// pulseDB is a database of engine with a queue's tables and Pulse's
// behind a fresh prefix: the queue, its pool, and the config a Storage is
// made from.
func pulseDB(t *testing.T, engine string) (*database.Queue, *sql.DB, appconfig.Config) {
	t.Helper()
	cfg := testdb.Config(t, engine)
	q := testdb.Open(t, cfg)
	cfg.TablePrefix = "p" + strings.TrimPrefix(cfg.JobsTable, "jobs_") + "_"
	pulsetest.CreateTables(t, q.DB(), engine, cfg.TablePrefix)
	return q, q.DB(), cfg
}

func newTestStorage(t *testing.T, db *sql.DB, cfg appconfig.Config, now time.Time) *Storage {
	t.Helper()
	s, err := NewStorage(context.Background(), cfg, db, Settings{Chunk: 2, StorageKeep: 7 * 24 * time.Hour}, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func hexMD5(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func value(v int64) *int64 { return &v }

// base is a Unix second at the start of a 7-day bucket (a multiple of
// 10080): entries up to a minute after it fall into bucket base in every
// period, which makes the expected rows below countable by hand.
const base = 178229 * 10080

// TestStorageWritesAsPulse: two batches land in Pulse's tables as
// DatabaseStorage::store writes them on each engine: entries that are not
// bucket-only in pulse_entries (key_hash as the engine computes it, or
// md5 hex on SQLite), one aggregate row per period and bucket for each
// aggregation, upserted across batches (count and sum add, min and max
// keep the least and greatest, avg weights by count), none for a period
// the entry is already too old for. Chunk 2 splits every statement.
func TestStorageWritesAsPulse(t *testing.T) {
	queue, slow, metric := "database:default", `App\Jobs\Rapport€`, "test_metric"
	count := func(ts int64, typ string) Entry {
		return Entry{Timestamp: ts, Type: typ, Key: queue, Aggregations: []string{aggCount}, OnlyBuckets: true}
	}
	slowJob := func(ts, ms int64) Entry {
		return Entry{Timestamp: ts, Type: "slow_job", Key: slow, Value: value(ms), Aggregations: []string{aggMax, aggCount}}
	}
	measure := func(ts, v int64) Entry {
		return Entry{Timestamp: ts, Type: metric, Key: "k", Value: value(v), Aggregations: []string{aggMin, aggSum, aggAvg}, OnlyBuckets: true}
	}
	batches := [][]Entry{
		{count(base+1, "processing"), count(base+2, "processing"), count(base-7200, "processing"), slowJob(base+4, 1500), slowJob(base+5, 2500),
			measure(base+7, 10), measure(base+8, 20)},
		{count(base+3, "processing"), slowJob(base+6, 1000), measure(base+9, 5), measure(base+10, 30), measure(base+11, 40)},
	}
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		_, db, cfg := pulseDB(t, engine)
		s := newTestStorage(t, db, cfg, time.Unix(base+100, 0))
		for _, b := range batches {
			if err := s.Ingest(context.Background(), b); err != nil {
				t.Fatal(err)
			}
		}
		var want []pulsetest.Aggregate
		agg := func(bucket, period int64, typ, key, aggregate, value string, count int64) {
			a := pulsetest.Aggregate{Bucket: bucket, Period: period, Type: typ, Key: key, Aggregate: aggregate, Value: value, KeyHash: hexMD5(key)}
			a.Count.Int64, a.Count.Valid = count, count != 0
			want = append(want, a)
		}
		for _, period := range []int64{60, 360, 1440, 10080} {
			if period == 360 || period == 1440 {
				agg(base-7200, period, "processing", queue, "count", "1", 0)
			}
			if period == 10080 {
				agg(base-10080, period, "processing", queue, "count", "1", 0)
			}
			agg(base, period, "processing", queue, "count", "3", 0)
			agg(base, period, "slow_job", slow, "count", "3", 0)
			agg(base, period, "slow_job", slow, "max", "2500", 0)
			agg(base, period, metric, "k", "avg", "21", 5)
			agg(base, period, metric, "k", "min", "5", 0)
			agg(base, period, metric, "k", "sum", "105", 0)
		}
		if got := pulsetest.Aggregates(t, db, engine, cfg.TablePrefix); !reflect.DeepEqual(got, want) {
			t.Errorf("pulse_aggregates:\n%s\nwant:\n%s", dump(got), dump(want))
		}
		var wantEntries []pulsetest.Entry
		for _, e := range []struct{ ts, ms int64 }{{base + 4, 1500}, {base + 5, 2500}, {base + 6, 1000}} {
			wantEntries = append(wantEntries, pulsetest.Entry{Timestamp: e.ts, Type: "slow_job", Key: slow, Value: sql.NullInt64{Int64: e.ms, Valid: true}, KeyHash: hexMD5(slow)})
		}
		if got := pulsetest.Entries(t, db, engine, cfg.TablePrefix); !reflect.DeepEqual(got, wantEntries) {
			t.Errorf("pulse_entries:\n%s\nwant:\n%s", dump(got), dump(wantEntries))
		}
	})
}

// TestStorageTrims: Trim deletes entries older than the storage keeps
// them and each period's aggregates from buckets the period no longer
// shows, keeping the rest.
func TestStorageTrims(t *testing.T) {
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		_, db, cfg := pulseDB(t, engine)
		now := time.Unix(base+100, 0)
		week := int64(7 * 24 * 3600)
		old := []Entry{
			{Timestamp: now.Unix() - week - 10, Type: "slow_job", Key: "old", Value: value(5000), Aggregations: []string{aggMax}},
			{Timestamp: now.Unix() - 3000, Type: "slow_job", Key: "recent", Value: value(5000), Aggregations: []string{aggMax}},
		}
		// Written while they were new, trimmed a week later.
		if err := newTestStorage(t, db, cfg, time.Unix(now.Unix()-week, 0)).Ingest(context.Background(), old[:1]); err != nil {
			t.Fatal(err)
		}
		s := newTestStorage(t, db, cfg, now)
		if err := s.Ingest(context.Background(), old[1:]); err != nil {
			t.Fatal(err)
		}
		if err := s.Trim(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, e := range pulsetest.Entries(t, db, engine, cfg.TablePrefix) {
			if e.Key != "recent" {
				t.Errorf("entry %+v kept: older than a week", e)
			}
		}
		periods := map[int64]bool{}
		for _, a := range pulsetest.Aggregates(t, db, engine, cfg.TablePrefix) {
			if a.Key != "recent" || a.Bucket <= now.Unix()-a.Period*60 {
				t.Errorf("aggregate %+v kept: its bucket is out of its period's view", a)
			}
			periods[a.Period] = true
		}
		// 3000 s ago is within the hour's view: every period keeps it.
		if len(periods) != 4 {
			t.Errorf("the recent entry's aggregates are kept in periods %v, want all four", periods)
		}
	})
}

func dump[T any](rows []T) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "  %+v\n", r)
	}
	return b.String()
}
