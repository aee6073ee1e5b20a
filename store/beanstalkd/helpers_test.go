package beanstalkd

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/beanstalkproto"
	"github.com/laraworker/laraworker/internal/testutil/testbeanstalkd"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
	"github.com/rs/zerolog"
)

const (
	classA = `App\Jobs\SendMail`
	classB = `App\Jobs\PhpOnly`
)

// env is a beanstalkd store on a private beanstalkd and an SQLite
// database (failed_jobs, job_batches), with a connection of its own that
// plays another worker (PHP's pheanstalk) or looks at the server.
type env struct {
	srv  *testbeanstalkd.Server
	db   *database.Queue
	s    *Store
	bs   *beanstalkproto.Conn
	logs *logBuffer
	ctx  context.Context
}

type envOptions struct {
	retryAfter time.Duration
	blockFor   time.Duration
	conns      int
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	cfg := testdb.Config(t, appconfig.EngineSQLite)
	cfg.ConnectionName = "beanstalkd"
	db := testdb.Open(t, cfg)
	srv := testbeanstalkd.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	retry := o.retryAfter
	if retry == 0 {
		retry = 90 * time.Second
	}
	host, port := "127.0.0.1", srv.Port
	bcfg := Config{Connection: "beanstalkd", Host: host, Port: port, Queue: "default", RetryAfter: retry, BlockFor: o.blockFor}
	e := &env{srv: srv, db: db, logs: &logBuffer{}, ctx: ctx}
	var err error
	if e.s, err = New(ctx, bcfg, db, Options{Conns: o.conns, Logger: zerolog.New(e.logs)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.s.Close() })
	if e.bs, err = beanstalkproto.Dial(ctx, srv.Addr, time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.bs.Close() })
	return e
}

// built is a payload as PHP's createObjectPayload writes it for class.
func built(t *testing.T, class string) []byte {
	t.Helper()
	raw, err := payload.BuildObjectPayload(phpserialize.Object(class), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// put pushes raw on tube as Laravel's pushRaw does: use, then put 1024
// 0 <retry_after>.
func (e *env) put(t *testing.T, tube string, raw []byte) uint64 {
	t.Helper()
	if err := e.bs.Use(tube); err != nil {
		t.Fatal(err)
	}
	id, err := e.bs.Put(beanstalkproto.DefaultPriority, 0, 90, raw)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (e *env) claim(t *testing.T, n int, opts jobqueue.ClaimOptions, queues ...string) []jobqueue.JobRow {
	t.Helper()
	rows, err := e.s.Claim(e.ctx, queues, n, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func (e *env) stats(t *testing.T, id uint64) beanstalkproto.JobStats {
	t.Helper()
	st, err := e.bs.StatsJob(id)
	if err != nil {
		t.Fatalf("stats-job %d: %v", id, err)
	}
	return st
}

// gone checks that the job is no longer on the server.
func (e *env) gone(t *testing.T, id uint64) {
	t.Helper()
	if st, err := e.bs.StatsJob(id); !errors.Is(err, beanstalkproto.ErrNotFound) {
		t.Fatalf("job %d is still there: %+v %v", id, st, err)
	}
}

// waitState waits until the job is in state.
func (e *env) waitState(t *testing.T, id uint64, state string) beanstalkproto.JobStats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := e.bs.StatsJob(id)
		if err == nil && st.State == state {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d: %+v %v, want %s", id, st, err, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// heldConn is the store's connection that holds row.
func (e *env) heldConn(t *testing.T, row jobqueue.JobRow) *conn {
	t.Helper()
	h := e.s.holdOf(row)
	if h == nil {
		t.Fatalf("the store holds no reservation of job %d", row.ID)
	}
	return h.conn
}

// breakConn closes the store's connection holding row, as a network
// failure would: the server gives its jobs back.
func (e *env) breakConn(t *testing.T, row jobqueue.JobRow) {
	t.Helper()
	c := e.heldConn(t, row)
	c.c.Close()
	e.waitState(t, uint64(row.ID), "ready")
}

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
