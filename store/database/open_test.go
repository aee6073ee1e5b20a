package database

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

func TestOpenKeepsACallersPool(t *testing.T) {
	cfg := engineConfig(t, appconfig.EngineSQLite, t.TempDir())
	own, err := sql.Open("sqlite", cfg.Database)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { own.Close() }) // after the tables are dropped
	e := openEnv(t, appconfig.EngineSQLite, cfg, Options{DB: own})
	if err := e.q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := own.Ping(); err != nil {
		t.Fatalf("Close closed the caller's pool: %v", err)
	}
}

// TestOpenErrorsHideSecrets: failed connections never show the password.
func TestOpenErrorsHideSecrets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const pw = "Sup3rS3cretPassw0rd"
	for _, c := range []appconfig.Config{
		{Driver: appconfig.EngineMySQL, Host: "127.0.0.1", Port: 3306, Database: "test", Username: "nosuchuser_" + pw, Password: pw},
		{Driver: appconfig.EngineMySQL, Host: "127.0.0.1", Port: 1, Database: "test", Username: "root", Password: pw},
		{Driver: appconfig.EnginePgSQL, Host: "127.0.0.1", Port: 5432, Database: "nosuchdb", Username: "postgres", Password: pw},
		{Driver: appconfig.EnginePgSQL, Host: "127.0.0.1", Port: 1, Database: "test", Username: "postgres", Password: pw},
		{Driver: appconfig.EngineSQLite, Database: "/nonexistent/dir/" + pw + "/db.sqlite"},
	} {
		c.JobsTable, c.FailedTable, c.BatchesTable, c.AppTimezone = "jobs", "failed_jobs", "job_batches", "UTC"
		c.AppKey = appconfig.Secret(pw)
		if c.Driver == appconfig.EngineSQLite {
			c.Password = pw // scrubbed wherever it appears
		}
		q, err := Open(ctx, c, Options{})
		if err == nil {
			q.Close()
			t.Fatalf("%s: connected", c.Driver)
		}
		if strings.Contains(err.Error(), pw) || strings.Contains(fmt.Sprintf("%+v", err), pw) {
			t.Errorf("%s error leaks the password: %v", c.Driver, err)
		}
		t.Logf("%s: %v", c.Driver, err)
	}
}

// TestServerVersionFromRealServers reads the version of the live servers
// and checks the lock clause the queue chose: SKIP LOCKED from MariaDB
// 10.6 / MySQL 8.0.1 / PostgreSQL 9.5, plain FOR UPDATE below, none on
// SQLite (Laravel's getLockForPopping).
func TestServerVersionFromRealServers(t *testing.T) {
	for _, engine := range allEngines {
		t.Run(engine, func(t *testing.T) {
			e := newEnv(t, engine)
			v := e.q.ServerVersion()
			t.Logf("%s server version %q -> %q", engine, v, e.q.LockClause())
			if v == "" {
				t.Fatal("no server version")
			}
			want := expectedLock(t, engine, v)
			if e.q.LockClause() != want || sqldb.LockForPopping(engine, v, "") != want {
				t.Fatalf("lock %q, want %q", e.q.LockClause(), want)
			}
			if !strings.Contains(e.q.st.ClaimSelect(1, 0), want) {
				t.Fatal("claim query lacks the lock clause")
			}
		})
	}
}

// expectedLock applies the documented thresholds to a version string
// read off a live server, independently of version.go.
func expectedLock(t *testing.T, engine, version string) string {
	t.Helper()
	var major, minor, patch int
	numbers := strings.TrimPrefix(version, "5.5.5-") // MariaDB's old replication prefix
	if _, err := fmt.Sscanf(numbers, "%d.%d.%d", &major, &minor, &patch); err != nil && engine != appconfig.EnginePgSQL {
		if _, err := fmt.Sscanf(numbers, "%d.%d", &major, &minor); err != nil {
			t.Fatalf("cannot read %q: %v", version, err)
		}
	}
	at := func(M, m, p int) bool { return major > M || major == M && (minor > m || minor == m && patch >= p) }
	switch {
	case engine == appconfig.EngineSQLite:
		return ""
	case engine == appconfig.EnginePgSQL:
		fmt.Sscanf(version, "%d.%d", &major, &minor)
		return pick(at(9, 5, 0))
	case strings.Contains(version, "MariaDB"):
		return pick(at(10, 6, 0))
	}
	return pick(at(8, 0, 1))
}

func pick(skipLocked bool) string {
	if skipLocked {
		return sqldb.LockSkipLocked
	}
	return sqldb.LockForUpdate
}
