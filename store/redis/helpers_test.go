package redis

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

const (
	classA = `App\Jobs\SendMail`
	classB = `App\Jobs\PhpOnly`
	// fixtureBatchID is the batch the batch fixtures' commands name.
	fixtureBatchID = "a35820df-95af-46d7-b2c8-42622312a3de"
	prefix         = "laravel_database_"
)

// env is a redis store on a private redis-server and a database of one
// engine, as an app with QUEUE_CONNECTION=redis has them.
type env struct {
	srv  *testredis.Server
	rc   *redis.Client
	q    *redisproto.Queue
	db   *database.Queue
	s    *Store
	logs *logBuffer
	ctx  context.Context
}

// envOptions change what newEnv builds.
type envOptions struct {
	retryAfter time.Duration
	blockFor   *time.Duration
	dbCache    bool // the app's cache store is "database"
	storeOpts  func(e *env) Options
}

func newEnv(t *testing.T, engine string, o envOptions) *env {
	t.Helper()
	cfg := testdb.Config(t, engine)
	cfg.ConnectionName = "redis"
	if o.dbCache {
		cfg = testdb.WithLocks(t, cfg)
	}
	db := testdb.Open(t, cfg)
	if o.dbCache {
		testdb.CreateCacheTable(t, db)
		testdb.CreateLockTable(t, db)
	}
	return newEnvOn(t, db, o)
}

// newEnvOn is newEnv on a database already open.
func newEnvOn(t testing.TB, db *database.Queue, o envOptions) *env {
	t.Helper()
	srv := testredis.Start(t)
	retry := o.retryAfter
	if retry == 0 {
		retry = 90 * time.Second
	}
	rcfg := redisproto.Config{
		Connection: "redis", Queue: "default", RetryAfter: retry, BlockFor: o.blockFor,
		Redis: redisproto.RedisConfig{Name: "default", Client: "phpredis", Addrs: []string{srv.Addr}, Prefix: prefix},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	q, err := redisproto.Open(ctx, rcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	e := &env{srv: srv, rc: srv.Client(t), q: q, db: db, logs: &logBuffer{}, ctx: ctx}
	opts := Options{}
	if o.storeOpts != nil {
		opts = o.storeOpts(e)
	}
	opts.Logger = zerolog.New(e.logs)
	if e.s, err = New(q, db, opts); err != nil {
		t.Fatal(err)
	}
	return e
}

// forEachEngine runs fn with a fresh env per database engine, in
// parallel.
func forEachEngine(t *testing.T, o envOptions, fn func(t *testing.T, e *env)) {
	testdb.ForEachEngine(t, func(t *testing.T, engine string) { fn(t, newEnv(t, engine, o)) })
}

// built is a payload as PHP's createObjectPayload writes it for class.
func built(t *testing.T, class string, props ...phpserialize.Entry) []byte {
	t.Helper()
	raw, err := payload.BuildObjectPayload(phpserialize.Object(class, props...), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// push pushes a job of class as dispatch() would on the redis connection
// and returns its uuid.
func (e *env) push(t *testing.T, queue, class string, props ...phpserialize.Entry) string {
	t.Helper()
	return e.pushRaw(t, queue, built(t, class, props...))
}

func (e *env) pushRaw(t *testing.T, queue string, raw []byte) string {
	t.Helper()
	if _, err := e.s.Push(e.ctx, jobqueue.PushItem{Queue: queue, Payload: raw}); err != nil {
		t.Fatal(err)
	}
	p, err := payload.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return p.UUID
}

// claim claims n jobs of queue and fails unless it gets them.
func (e *env) claim(t *testing.T, queue string, n int) []jobqueue.JobRow {
	t.Helper()
	rows, err := e.s.Claim(e.ctx, []string{queue}, n, jobqueue.ClaimOptions{})
	if err != nil || len(rows) != n {
		t.Fatalf("claimed %d of %d from %q: %v", len(rows), n, queue, err)
	}
	return rows
}

// takeOver is what another worker's pop does to a job whose reservation
// expired: the member moves back to the list and is popped again (one
// more attempt, another member). It returns the other worker's job.
func (e *env) takeOver(t *testing.T, row jobqueue.JobRow) *redisproto.Job {
	t.Helper()
	k := e.q.Config().Keys(row.Queue)
	if _, err := e.rc.ZScore(e.ctx, k.Reserved, row.Reservation).Result(); err != nil {
		t.Fatalf("the job is not reserved: %v", err)
	}
	e.rc.ZAddXX(e.ctx, k.Reserved, redis.Z{Score: float64(time.Now().Unix() - 1), Member: row.Reservation})
	other, err := redisproto.New(e.rc, e.q.Config())
	if err != nil {
		t.Fatal(err)
	}
	res, err := other.Pop(e.ctx, row.Queue, redisproto.PopOptions{})
	// What a pop moves back is the member: the re-encoded payload.
	if err != nil || len(res.Jobs) == 0 || string(res.Jobs[0].Payload) != row.Reservation {
		t.Fatalf("the other worker's pop did not take the job: %+v %v", res, err)
	}
	return res.Jobs[0]
}

// finishElsewhere is the other worker deleting the job it took over.
func (e *env) finishElsewhere(t *testing.T, j *redisproto.Job) {
	t.Helper()
	if lost, err := e.q.Delete(e.ctx, j); err != nil || len(lost) != 0 {
		t.Fatalf("the other worker's delete: %v %v", lost, err)
	}
}

// keys is the app's keyspace, one line per key with its content.
func (e *env) keys(t *testing.T) string {
	t.Helper()
	ks, err := e.rc.Keys(e.ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	slices.Sort(ks)
	for _, k := range ks {
		typ, _ := e.rc.Type(e.ctx, k).Result()
		fmt.Fprintf(&b, "%s (%s):", k, typ)
		switch typ {
		case "list":
			vals, _ := e.rc.LRange(e.ctx, k, 0, -1).Result()
			fmt.Fprintf(&b, " %q", vals)
		case "zset":
			vals, _ := e.rc.ZRangeWithScores(e.ctx, k, 0, -1).Result()
			for _, v := range vals {
				fmt.Fprintf(&b, " %q@%.0f", v.Member, v.Score)
			}
		case "string":
			v, _ := e.rc.Get(e.ctx, k).Result()
			fmt.Fprintf(&b, " %q", v)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// list is a queue's ready list; reserved and delayed its sets' members.
func (e *env) list(t *testing.T, queue string) []string {
	t.Helper()
	v, err := e.rc.LRange(e.ctx, e.q.Config().Keys(queue).Ready, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (e *env) reserved(t *testing.T, queue string) []redis.Z {
	t.Helper()
	v, err := e.rc.ZRangeWithScores(e.ctx, e.q.Config().Keys(queue).Reserved, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (e *env) delayed(t *testing.T, queue string) []redis.Z {
	t.Helper()
	v, err := e.rc.ZRangeWithScores(e.ctx, e.q.Config().Keys(queue).Delayed, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// makeDue makes every delayed job of queue due now.
func (e *env) makeDue(t *testing.T, queue string) {
	t.Helper()
	for _, z := range e.delayed(t, queue) {
		e.rc.ZAddXX(e.ctx, e.q.Config().Keys(queue).Delayed, redis.Z{Score: float64(time.Now().Unix() - 1), Member: z.Member})
	}
}

func (e *env) failed(t *testing.T) []testdb.FailedRow { return testdb.FailedRows(t, e.db) }

// insertBatch adds a job_batches row as PendingBatch::store does.
func (e *env) insertBatch(t *testing.T, id string, total int, options []byte) {
	t.Helper()
	opts := string(options)
	if e.db.Dialect().Name() == appconfig.EnginePgSQL {
		opts = base64.StdEncoding.EncodeToString(options)
	}
	query := e.db.Dialect().Rebind(fmt.Sprintf("insert into %s (id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids, options, cancelled_at, created_at, finished_at) values (?, '', ?, ?, 0, '[]', ?, null, ?, null)", e.db.Config().BatchesTable))
	if _, err := e.db.DB().Exec(query, id, total, total, opts, time.Now().Unix()); err != nil {
		t.Fatal(err)
	}
}

func (e *env) batch(t *testing.T, id string) jobqueue.Batch {
	t.Helper()
	b, err := e.db.FindBatch(e.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "payloads", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// field is a top-level string or number field of a JSON payload.
func field(t *testing.T, raw, name string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return m[name]
}

// waitUntil polls cond until it holds, failing the test after timeout.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, timeout, what, cond)
}

// logBuffer collects logs for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// repository opens the app's database side of cfg as the CLI does for a
// redis connection (under its name), closed after the test.
func repository(t testing.TB, cfg appconfig.Config) *database.Queue {
	t.Helper()
	cfg.ConnectionName = "redis"
	db, err := database.Open(context.Background(), cfg, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// pushID pushes item through s and returns the job's id (the payload's
// "id").
func pushID(ctx context.Context, s *Store, item jobqueue.PushItem) (string, error) {
	id, err := s.Push(ctx, item)
	return id.Str, err
}
