package testdsn

import (
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// probeTimeout bounds the one TCP dial that decides whether a server is
// there. A refused connection (nothing listening) answers at once; the
// timeout only matters for an address that drops packets, where the
// drivers' own dials would wait 50 s and more per test. One second leaves
// room for a loaded machine, where 300 ms could skip a live server.
const probeTimeout = time.Second

// requiredProbeTimeout is the probe's bound when the servers must be
// there (LARAWORKER_TEST_REQUIRE_DB): a slow answer must not fail CI.
const requiredProbeTimeout = 10 * time.Second

// hint is the second half of every skip message: what to start.
const hint = "start it or run scripts/services.sh; scripts/test runs everything"

var probes sync.Map // network+" "+address -> *probe

type probe struct {
	once sync.Once
	err  error
}

// Reachable dials network/address once per test process (the answer is
// cached) and reports why nothing answered, or nil.
func Reachable(network, address string) error {
	p, _ := probes.LoadOrStore(network+" "+address, &probe{})
	pr := p.(*probe)
	pr.once.Do(func() {
		timeout := probeTimeout
		if Required() {
			timeout = requiredProbeTimeout
		}
		conn, err := net.DialTimeout(network, address, timeout)
		if err != nil {
			pr.err = err
			return
		}
		conn.Close()
	})
	return pr.err
}

// Unreachable is "" when a server answers at network/address, else the one
// line a skip says: what is missing and what to start. what names the
// server and where it is configured.
func Unreachable(what, network, address string) string {
	err := Reachable(network, address)
	if err == nil {
		return ""
	}
	return fmt.Sprintf("%s not reachable at %s: %s (%v)", what, address, hint, err)
}

// Need skips t, with one line saying what to start, when no server answers
// at network/address. With LARAWORKER_TEST_REQUIRE_DB (scripts/test, CI)
// it fails t instead: there every server test must run.
func Need(t testing.TB, what, network, address string) {
	t.Helper()
	msg := Unreachable(what, network, address)
	if msg == "" {
		return
	}
	if Required() {
		t.Fatal(msg + "; LARAWORKER_TEST_REQUIRE_DB is set, so this fails")
	}
	t.Skip(msg)
}

// NeedMySQL skips (or fails, when required) t unless the tests' MariaDB
// answers (LARAWORKER_TEST_MYSQL_DSN, default 127.0.0.1:3306).
func NeedMySQL(t testing.TB) {
	t.Helper()
	mc, err := mysql.ParseDSN(MySQLDSN())
	if err != nil {
		t.Fatalf("LARAWORKER_TEST_MYSQL_DSN: %v", err)
	}
	network := mc.Net
	if network == "" {
		network = "tcp"
	}
	Need(t, "MariaDB (LARAWORKER_TEST_MYSQL_DSN)", network, mc.Addr)
}

// NeedPostgreSQL skips (or fails, when required) t unless the tests'
// PostgreSQL answers (LARAWORKER_TEST_PG_DSN, default 127.0.0.1:5432).
func NeedPostgreSQL(t testing.TB) {
	t.Helper()
	pc, err := pgx.ParseConfig(PostgreSQLDSN())
	if err != nil {
		t.Fatalf("LARAWORKER_TEST_PG_DSN: %v", err)
	}
	network, address := "tcp", net.JoinHostPort(pc.Host, strconv.Itoa(int(pc.Port)))
	// A host that is a path is the folder of PostgreSQL's Unix socket.
	if len(pc.Host) > 0 && pc.Host[0] == '/' {
		network, address = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", pc.Host, pc.Port)
	}
	Need(t, "PostgreSQL (LARAWORKER_TEST_PG_DSN)", network, address)
}

// RedisAddr is the machine's shared Redis the tests use (never flushed):
// LARAWORKER_TEST_REDIS, default 127.0.0.1:6379.
func RedisAddr() string { return envOr("LARAWORKER_TEST_REDIS", "127.0.0.1:6379") }

// NeedRedis skips (or fails, when required) t unless the shared Redis
// answers at RedisAddr.
func NeedRedis(t testing.TB) {
	t.Helper()
	Need(t, "Redis (LARAWORKER_TEST_REDIS)", "tcp", RedisAddr())
}

// NeedEngine is NeedMySQL or NeedPostgreSQL for a driver name ("mysql",
// "pgsql"); any other (SQLite) needs no server.
func NeedEngine(t testing.TB, driver string) {
	t.Helper()
	switch driver {
	case "mysql", "mariadb":
		NeedMySQL(t)
	case "pgsql":
		NeedPostgreSQL(t)
	}
}
