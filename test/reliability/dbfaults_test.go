package reliability

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
	"github.com/laraworker/laraworker/worker"
	"github.com/rs/zerolog"
)

// runCounter counts handler runs per job uuid.
type runCounter struct {
	mu   sync.Mutex
	runs map[string]int
}

func (c *runCounter) handler(work time.Duration) handlers.HandlerFunc {
	return func(ctx context.Context, job *handlers.Job) error {
		c.mu.Lock()
		if c.runs == nil {
			c.runs = map[string]int{}
		}
		c.runs[job.UUID]++
		c.mu.Unlock()
		time.Sleep(work)
		return nil
	}
}

func (c *runCounter) summary() (distinct, twice int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.runs {
		if n > 1 {
			twice++
		}
	}
	return len(c.runs), twice
}

func pushNoops(t *testing.T, q *database.Queue, n int) {
	t.Helper()
	raw, _ := payload.BuildObjectPayload(phpserialize.Object(noopClass), payload.BuildOptions{})
	pushCopies(t, q, raw, "default", n)
}

func faultOptions(concurrency int) worker.Config {
	return worker.Config{
		Sleep: 50 * time.Millisecond, MemoryMB: -1, Tries: -1, Concurrency: concurrency,
		Grace: 5 * time.Second, Abandon: time.Second,
	}
}

// drainDaemon runs a worker until the jobs table is empty (orphaned
// reservations come back after retry_after) or limit passes.
func drainDaemon(t *testing.T, q *database.Queue, reg *handlers.Registry, opts worker.Config, limit time.Duration, logs *syncBuffer) {
	t.Helper()
	opts.Logger = zerolog.New(logs)
	w, err := worker.New(q, reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	deadline := time.Now().Add(limit)
	admin := q.DB()
	for time.Now().Before(deadline) {
		var n int
		if err := admin.QueryRow("select count(*) from " + q.Config().JobsTable).Scan(&n); err == nil && n == 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	<-done
}

// TestKilledConnections kills every database connection of the worker's
// own database user (MariaDB: KILL CONNECTION; PostgreSQL:
// pg_terminate_backend) every 200 ms while it runs 1,000 jobs: the worker
// reconnects and goes on, no job is lost or failed.
func TestKilledConnections(t *testing.T) {
	for _, engine := range []string{appconfig.EngineMySQL, appconfig.EnginePgSQL} {
		t.Run(engine, func(t *testing.T) {
			cfg := testdb.Config(t, engine)
			admin := testdb.Open(t, cfg)
			cfg.Username, cfg.Password = dedicatedUser(t, admin, cfg)
			cfg.RetryAfter = 3
			q, err := database.Open(context.Background(), cfg, database.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			const n = 1000
			pushNoops(t, admin, n)
			runs := &runCounter{}
			reg := handlers.NewRegistry()
			reg.Handle(noopClass, runs.handler(3*time.Millisecond))

			stop := make(chan struct{})
			var kills, killed atomic.Int64
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(200 * time.Millisecond):
					}
					kills.Add(1)
					killed.Add(int64(killAll(t, admin.DB(), engine, cfg.Username)))
				}
			}()
			logs := &syncBuffer{}
			started := time.Now()
			drainDaemon(t, q, reg, faultOptions(8), 90*time.Second, logs)
			close(stop)

			if left := count(t, admin.DB(), "select count(*) from "+cfg.JobsTable); left != 0 {
				t.Errorf("%d jobs left", left)
			}
			if f := failedRows(t, admin.DB(), cfg.FailedTable); len(f) != 0 {
				t.Errorf("%d jobs failed; first: %.300s", len(f), f[0].Exception)
			}
			distinct, twice := runs.summary()
			if distinct != n {
				t.Errorf("%d distinct jobs ran, want %d", distinct, n)
			}
			if killed.Load() == 0 {
				t.Fatal("no connection was killed: the test tested nothing")
			}
			t.Logf("%s: %d jobs in %s; %d kill rounds killed %d connections; %d jobs ran twice (a claim or delete cut by a kill)",
				engine, n, time.Since(started).Round(time.Millisecond), kills.Load(), killed.Load(), twice)
		})
	}
}

// dedicatedUser creates a user (role) for the worker alone, allowed on
// the test's tables, dropped after the test.
func dedicatedUser(t *testing.T, admin *database.Queue, cfg appconfig.Config) (string, appconfig.Secret) {
	t.Helper()
	b := make([]byte, 8)
	rand.Read(b)
	user, password := "lw_rel_"+hex.EncodeToString(b[:4]), "pw"+hex.EncodeToString(b[4:])
	db := admin.DB()
	var stmts []string
	if cfg.Driver == appconfig.EngineMySQL {
		stmts = []string{
			"create user '" + user + "'@'%' identified by '" + password + "'",
			"grant all on " + cfg.Database + ".* to '" + user + "'@'%'",
		}
	} else {
		stmts = []string{"create role " + user + " login password '" + password + "'"}
		for _, table := range []string{cfg.JobsTable, cfg.FailedTable, cfg.BatchesTable} {
			stmts = append(stmts, "grant all on "+table+" to "+user)
		}
		stmts = append(stmts, "grant usage, select on all sequences in schema public to "+user)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	t.Cleanup(func() {
		killAll(t, db, cfg.Driver, user)
		time.Sleep(100 * time.Millisecond)
		drop := []string{"drop user '" + user + "'@'%'"}
		if cfg.Driver == appconfig.EnginePgSQL {
			drop = []string{"drop owned by " + user, "drop role " + user}
		}
		for _, s := range drop {
			if _, err := db.Exec(s); err != nil {
				t.Errorf("%s: %v", s, err)
			}
		}
	})
	return user, appconfig.Secret(password)
}

func killAll(t *testing.T, db *sql.DB, engine, user string) int {
	if engine == appconfig.EngineMySQL {
		return killUserConnections(t, db, user)
	}
	var n int
	if err := db.QueryRow("select count(pg_terminate_backend(pid)) from pg_stat_activity where usename = $1", user).Scan(&n); err != nil {
		t.Errorf("pg_terminate_backend: %v", err)
	}
	return n
}

// TestInjectedDeadlocksAndLockWaits: while a worker (lock waits time out
// after 1 s on its connections) runs 800 jobs, a second connection keeps
// taking locks on rows the worker is running: it holds some for 1.6 s
// (the worker's delete waits and times out: error 1205) and locks pairs
// in the opposite order of the worker's grouped delete (deadlocks: 1213).
// The worker must retry: every job runs once and none fails.
func TestInjectedDeadlocksAndLockWaits(t *testing.T) {
	cfg := testdb.Config(t, appconfig.EngineMySQL)
	admin := testdb.Open(t, cfg)
	cfg.Username, cfg.Password = dedicatedUser(t, admin, cfg)
	mc := mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr, mc.DBName = cfg.Username, cfg.Password.Reveal(), "tcp", fmt.Sprintf("%s:%d", cfg.Host, cfg.Port), cfg.Database
	mc.Params = map[string]string{"innodb_lock_wait_timeout": "1"}
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	q, err := database.Open(context.Background(), cfg, database.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	const n = 800
	pushNoops(t, admin, n)
	runs := &runCounter{}
	reg := handlers.NewRegistry()
	reg.Handle(noopClass, runs.handler(40*time.Millisecond))

	var deadlocksBefore int64
	statusVar(t, admin.DB(), "Innodb_deadlocks", &deadlocksBefore)
	stop := make(chan struct{})
	var waits, rounds atomic.Int64
	adversaryDone := make(chan struct{})
	go func() {
		defer close(adversaryDone)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			rounds.Add(1)
			if i%2 == 0 {
				waits.Add(int64(holdLocks(admin.DB(), cfg, cfg.Username)))
			} else {
				crossLocks(admin.DB(), cfg)
			}
		}
	}()
	logs := &syncBuffer{}
	started := time.Now()
	drainDaemon(t, q, reg, faultOptions(8), 2*time.Minute, logs)
	close(stop)
	<-adversaryDone
	var deadlocksAfter int64
	statusVar(t, admin.DB(), "Innodb_deadlocks", &deadlocksAfter)

	if left := count(t, admin.DB(), "select count(*) from "+cfg.JobsTable); left != 0 {
		t.Errorf("%d jobs left", left)
	}
	if f := failedRows(t, admin.DB(), cfg.FailedTable); len(f) != 0 {
		t.Errorf("%d jobs failed; first: %.300s", len(f), f[0].Exception)
	}
	distinct, twice := runs.summary()
	if distinct != n || twice != 0 {
		t.Errorf("%d distinct jobs ran (%d more than once), want %d once each", distinct, twice, n)
	}
	if waits.Load() == 0 {
		t.Error("the worker never waited on an injected lock: the test tested nothing")
	}
	t.Logf("%d jobs in %s; %d adversary rounds; the worker was seen waiting on injected locks %d times (each held past its 1 s lock-wait timeout); deadlocks (Innodb_deadlocks) %d",
		n, time.Since(started).Round(time.Millisecond), rounds.Load(), waits.Load(), deadlocksAfter-deadlocksBefore)
}

func statusVar(t *testing.T, db *sql.DB, name string, out *int64) {
	t.Helper()
	var k string
	if err := db.QueryRow("show global status like '"+name+"'").Scan(&k, out); err != nil {
		t.Logf("%s: %v", name, err)
	}
}

// reservedIDs lists up to n reserved (running) job ids, ascending.
func reservedIDs(db *sql.DB, cfg appconfig.Config, n int) []int64 {
	rows, err := db.Query(fmt.Sprintf("select id from %s where reserved_at is not null order by id limit %d", cfg.JobsTable, n))
	if err != nil {
		return nil
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// holdLocks locks running jobs' rows for 1.6 s and returns how many of
// the worker's transactions were seen waiting on them.
func holdLocks(db *sql.DB, cfg appconfig.Config, user string) int {
	ids := reservedIDs(db, cfg, 4)
	if len(ids) == 0 {
		time.Sleep(20 * time.Millisecond)
		return 0
	}
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0
	}
	defer tx.Rollback()
	for _, id := range ids {
		if _, err := tx.Exec(fmt.Sprintf("update %s set available_at = available_at + 1 where id = ?", cfg.JobsTable), id); err != nil {
			return 0
		}
	}
	time.Sleep(700 * time.Millisecond)
	var waiting int
	_ = db.QueryRow(`select count(*) from information_schema.innodb_trx t join information_schema.processlist p on p.id = t.trx_mysql_thread_id
		where t.trx_state = 'LOCK WAIT' and p.user = ?`, user).Scan(&waiting)
	time.Sleep(900 * time.Millisecond)
	return waiting
}

// crossLocks locks the highest of two running rows, waits for the
// worker's grouped delete to lock the lower one and queue behind it, then
// asks for the lower one: a lock cycle InnoDB breaks with a deadlock.
func crossLocks(db *sql.DB, cfg appconfig.Config) {
	ids := reservedIDs(db, cfg, 8)
	if len(ids) < 2 {
		time.Sleep(20 * time.Millisecond)
		return
	}
	lo, hi := ids[0], ids[len(ids)-1]
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		return
	}
	defer tx.Rollback()
	upd := fmt.Sprintf("update %s set available_at = available_at + 1 where id = ?", cfg.JobsTable)
	if _, err := tx.Exec(upd, hi); err != nil {
		return
	}
	time.Sleep(150 * time.Millisecond)
	_, _ = tx.Exec(upd, lo)
	time.Sleep(50 * time.Millisecond)
}

// TestDatabaseRestart stops and starts the database server while a
// worker runs 1,000 jobs: claims and writes fail while it is down and are
// retried, and every job runs to completion. The server is the test's own
// (privateMariaDB, privatePostgres: own data directory and port), so the
// shared servers, or a developer's own database, are never stopped.
func TestDatabaseRestart(t *testing.T) {
	for _, engine := range []string{appconfig.EngineMySQL, appconfig.EnginePgSQL} {
		t.Run(engine, func(t *testing.T) {
			srv := privateServer(t, engine)
			cfg := srv.config(t)
			admin := testdb.Open(t, cfg)
			cfg.RetryAfter = 5
			q := openQueue(t, cfg)
			const n = 1000
			pushNoops(t, admin, n)
			runs := &runCounter{}
			reg := handlers.NewRegistry()
			reg.Handle(noopClass, runs.handler(5*time.Millisecond))
			logs := &syncBuffer{}
			done := make(chan struct{})
			started := time.Now()
			go func() {
				defer close(done)
				drainDaemon(t, q, reg, faultOptions(8), 3*time.Minute, logs)
			}()
			time.Sleep(700 * time.Millisecond)
			srv.stop(t)
			down := time.Now()
			time.Sleep(2 * time.Second)
			srv.start(t)
			outage := time.Since(down)
			<-done
			if left := count(t, admin.DB(), "select count(*) from "+cfg.JobsTable); left != 0 {
				t.Errorf("%d jobs left", left)
			}
			if f := failedRows(t, admin.DB(), cfg.FailedTable); len(f) != 0 {
				t.Errorf("%d jobs failed; first: %.300s", len(f), f[0].Exception)
			}
			distinct, twice := runs.summary()
			if distinct != n {
				t.Errorf("%d distinct jobs ran, want %d", distinct, n)
			}
			if !strings.Contains(logs.String(), "retrying") {
				t.Error("the worker logged no failed database call: the restart tested nothing")
			}
			t.Logf("%s (private server) down for %s; %d jobs in %s, %d ran twice (in flight when the server stopped)",
				engine, outage.Round(time.Millisecond), n, time.Since(started).Round(time.Millisecond), twice)
		})
	}
}

// privateServer starts a server of the test's own for engine.
func privateServer(t *testing.T, engine string, settings ...string) *dbServer {
	t.Helper()
	if engine == appconfig.EngineMySQL {
		return privateMariaDB(t)
	}
	return privatePostgres(t, settings...)
}
