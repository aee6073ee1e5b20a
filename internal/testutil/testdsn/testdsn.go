// Package testdsn says where the tests' database servers are, for every
// test package: MariaDB/MySQL from LARAWORKER_TEST_MYSQL_DSN (default
// root@tcp(127.0.0.1:3306)/test) and PostgreSQL from LARAWORKER_TEST_PG_DSN
// (default postgres://postgres@127.0.0.1:5432/test); the shared Redis from
// LARAWORKER_TEST_REDIS (default 127.0.0.1:6379). It imports nothing of
// laraworker's, so package laravel's own tests can use it too.
//
// A test that needs a server calls Need* (MySQL and PostgreSQL do it for
// it): one short TCP dial per process and address, so `go test ./...` on a
// machine without the servers skips those tests in seconds, with one line
// saying what to start, instead of waiting on the drivers' timeouts. With
// LARAWORKER_TEST_REQUIRE_DB set (scripts/test, CI) they fail instead.
package testdsn

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"strconv"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// Server is one database server and the database the tests use on it.
type Server struct {
	Host     string
	Port     int
	Socket   string
	Database string
	User     string
	Password string
}

// MySQLDSN is the go-sql-driver/mysql DSN of the tests' MariaDB/MySQL.
func MySQLDSN() string { return envOr("LARAWORKER_TEST_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/test") }

// MySQL is the MariaDB/MySQL server of the tests. It skips t when the
// server does not answer (NeedMySQL).
func MySQL(t testing.TB) Server {
	t.Helper()
	NeedMySQL(t)
	mc, err := mysql.ParseDSN(MySQLDSN())
	if err != nil {
		t.Fatalf("LARAWORKER_TEST_MYSQL_DSN: %v", err)
	}
	s := Server{Database: mc.DBName, User: mc.User, Password: mc.Passwd}
	if mc.Net == "unix" {
		s.Socket = mc.Addr
		return s
	}
	host, port, err := net.SplitHostPort(mc.Addr)
	if err != nil {
		t.Fatalf("LARAWORKER_TEST_MYSQL_DSN: address %q: %v", mc.Addr, err)
	}
	s.Host = host
	s.Port, _ = strconv.Atoi(port)
	return s
}

// PostgreSQLDSN is the pgx connection string of the tests' PostgreSQL.
func PostgreSQLDSN() string {
	return envOr("LARAWORKER_TEST_PG_DSN", "postgres://postgres@127.0.0.1:5432/test")
}

// PostgreSQL is the PostgreSQL server of the tests. It skips t when the
// server does not answer (NeedPostgreSQL).
func PostgreSQL(t testing.TB) Server {
	t.Helper()
	NeedPostgreSQL(t)
	pc, err := pgx.ParseConfig(PostgreSQLDSN())
	if err != nil {
		t.Fatalf("LARAWORKER_TEST_PG_DSN: %v", err)
	}
	return Server{Host: pc.Host, Port: int(pc.Port), Database: pc.Database, User: pc.User, Password: pc.Password}
}

// Required reports whether an unreachable server must fail the tests
// (LARAWORKER_TEST_REQUIRE_DB, set by CI) instead of skipping them.
func Required() bool { return os.Getenv("LARAWORKER_TEST_REQUIRE_DB") != "" }

// Suffix is a random suffix for table names, so concurrent tests (and
// concurrent checkouts) never share tables.
func Suffix(t testing.TB) string {
	t.Helper()
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
