package database

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/phpjson"
	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// fakeClock is an injectable, settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *fakeClock) Unix() int64     { return c.Now().Unix() }

// testEnv is one engine with its own uniquely named tables.
type testEnv struct {
	engine string
	cfg    appconfig.Config
	q      *Queue
	clock  *fakeClock
	ctx    context.Context
}

// engineConfig returns a appconfig.Config for engine with unique table names. For
// sqlite, dir holds the database file.
func engineConfig(t testing.TB, engine, dir string) appconfig.Config {
	t.Helper()
	sfx := testdsn.Suffix(t)
	cfg := appconfig.Config{
		Driver: engine, AppTimezone: "UTC", AppCipher: "AES-256-CBC", ConnectionName: "database",
		JobsTable: "jobs_" + sfx, FailedTable: "failed_jobs_" + sfx, BatchesTable: "job_batches_" + sfx,
		DefaultQueue: "default", RetryAfter: 90,
	}
	var srv testdsn.Server
	switch engine {
	case appconfig.EngineMySQL:
		srv = testdsn.MySQL(t)
	case appconfig.EnginePgSQL:
		srv = testdsn.PostgreSQL(t)
	case appconfig.EngineSQLite:
		cfg.Database = filepath.Join(dir, "database.sqlite")
		return cfg
	}
	cfg.Host, cfg.Port, cfg.Socket, cfg.Database, cfg.Username, cfg.Password = srv.Host, srv.Port, srv.Socket, srv.Database, srv.User, appconfig.Secret(srv.Password)
	return cfg
}

var allEngines = []string{appconfig.EngineMySQL, appconfig.EnginePgSQL, appconfig.EngineSQLite}

// newEnv opens a queue on engine with fresh tables that are dropped after
// the test. Unreachable servers skip the test (with the reason).
func newEnv(t *testing.T, engine string) *testEnv {
	t.Helper()
	return openEnv(t, engine, engineConfig(t, engine, t.TempDir()), Options{})
}

// openEnv opens cfg with opts and a fake clock.
func openEnv(t *testing.T, engine string, cfg appconfig.Config, opts Options) *testEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	opts.Clock = clock.Now
	q, err := Open(ctx, cfg, opts)
	if err != nil {
		if engine != appconfig.EngineSQLite && !testdsn.Required() {
			t.Skipf("%s not reachable: %v", engine, err)
		}
		t.Fatal(err)
	}
	if err := q.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := q.DropTables(context.Background()); err != nil {
			t.Errorf("drop tables: %v", err)
		}
		q.Close()
	})
	return &testEnv{engine: engine, cfg: cfg, q: q, clock: clock, ctx: ctx}
}

// forEachEngine runs fn as a parallel subtest per engine.
func forEachEngine(t *testing.T, fn func(t *testing.T, e *testEnv)) {
	for _, engine := range allEngines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			fn(t, newEnv(t, engine))
		})
	}
}

// testPayload builds a payload shaped like Laravel's createObjectPayload.
func testPayload(uuid, class string) []byte {
	name, err := phpjson.String(class, phpjson.UnescapedUnicode)
	if err != nil {
		panic(err) // test classes are valid UTF-8
	}
	return []byte(`{"uuid":"` + uuid + `","displayName":` + name + `,"job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"retryUntil":null,"data":{"commandName":` + name + `,"command":"O:8:\"stdClass\":0:{}"}}`)
}

func newUUID(t testing.TB) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// row is a jobs row to insert directly.
type row struct {
	queue       string
	payload     []byte
	attempts    int
	reservedAt  *int64
	availableAt int64
	createdAt   int64
}

func i64(v int64) *int64 { return &v }

func (e *testEnv) insertRow(t *testing.T, r row) int64 {
	t.Helper()
	if r.payload == nil {
		r.payload = testPayload(newUUID(t), `App\Jobs\Test`)
	}
	var id int64
	err := e.q.inTx(e.ctx, func(tx *sql.Tx, _ int) error {
		var reserved any
		if r.reservedAt != nil {
			reserved = *r.reservedAt
		}
		query := e.q.st.InsertJobs(1)
		args := []any{r.queue, r.attempts, reserved, r.availableAt, r.createdAt, string(r.payload)}
		if e.q.d.ReturningID() != "" {
			return tx.QueryRowContext(e.ctx, query, args...).Scan(&id)
		}
		res, err := tx.ExecContext(e.ctx, query, args...)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// allJobs returns every jobs row by id.
func (e *testEnv) allJobs(t *testing.T) []jobqueue.JobRow {
	t.Helper()
	jobs, err := queryJobs(e.ctx, e.q.db, e.q.d.Rebind(fmt.Sprintf("select * from %s order by %s", e.q.d.Quote(e.cfg.JobsTable), e.q.d.Quote("id"))))
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func (e *testEnv) jobByID(t *testing.T, id int64) *jobqueue.JobRow {
	t.Helper()
	for _, j := range e.allJobs(t) {
		if j.ID == id {
			return &j
		}
	}
	return nil
}

func (e *testEnv) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	if _, err := e.q.db.ExecContext(e.ctx, e.q.d.Rebind(query), args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func (e *testEnv) quoted(name string) string { return e.q.d.Quote(name) }

func ptrEq(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func fmtPtr(p *int64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatInt(*p, 10)
}

// failPayloadUUID fails job under its payload's uuid, returning the uuid
// stored (jobqueue.ErrNoUUID when the payload has none).
func (q *Queue) failPayloadUUID(ctx context.Context, job jobqueue.JobRow, exception string) (string, error) {
	uuid, _, err := payloadMeta(job.Payload)
	if err != nil {
		return "", err
	}
	return q.fail(ctx, job, uuid, exception, jobqueue.Followup{})
}

// claimOne claims a single job (nil when the queues are empty).
func (q *Queue) claimOne(ctx context.Context, queues []string, opts jobqueue.ClaimOptions) (*jobqueue.JobRow, error) {
	jobs, err := q.Claim(ctx, queues, 1, opts)
	if len(jobs) == 0 {
		return nil, err
	}
	return &jobs[0], err
}
