package servercpu

import (
	"context"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// burns is a statement that keeps the server's CPU busy for a few hundred
// milliseconds, per engine.
var burns = map[string]string{
	appconfig.EngineMySQL: "select benchmark(3000000, md5('laraworker'))",
	appconfig.EnginePgSQL: "select count(*) from generate_series(1, 4000000)",
}

// The reading grows by at least the CPU a query burns on the server, and
// for PostgreSQL also once the backend that burnt it has exited (its time
// then sits in the postmaster's cutime/cstime).
func TestReadCountsWhatTheServerBurns(t *testing.T) {
	for _, engine := range []string{appconfig.EngineMySQL, appconfig.EnginePgSQL} {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			q, err := database.Open(ctx, testdb.Config(t, engine), database.Options{})
			if err != nil {
				t.Skipf("%s not reachable: %v", engine, err)
			}
			defer q.Close()
			before, err := Read(engine)
			if err != nil {
				t.Skipf("the server does not run on this machine: %v", err)
			}
			var backend int
			if engine == appconfig.EnginePgSQL {
				conn, err := q.DB().Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if err := conn.QueryRowContext(ctx, "select pg_backend_pid()").Scan(&backend); err != nil {
					t.Fatal(err)
				}
				if _, err := conn.ExecContext(ctx, burns[engine]); err != nil {
					t.Fatal(err)
				}
				conn.Close()
			} else if _, err := q.DB().ExecContext(ctx, burns[engine]); err != nil {
				t.Fatal(err)
			}
			q.Close()
			waitGone(t, backend)
			after, err := Read(engine)
			if err != nil {
				t.Fatal(err)
			}
			if grew := after - before; grew < 100*time.Millisecond {
				t.Errorf("server CPU grew by %v over a query that burns several hundred ms", grew)
			}
		})
	}
}

// waitGone waits until process pid has exited (0: nothing to wait for).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	if pid == 0 {
		return
	}
	testwait.Until(t, 10*time.Second, fmt.Sprintf("backend %d to exit after its connection closed", pid), func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return os.IsNotExist(err)
	})
}

func TestParseStatHandlesCommWithSpacesAndParentheses(t *testing.T) {
	line := "4242 (postgres: a (b)) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 30 7 3 20 0 1 0 99 0 0"
	p, ok := parseStat(line)
	if !ok {
		t.Fatal("not parsed")
	}
	if p.pid != 4242 || p.ppid != 17 || p.comm != "postgres: a (b)" || p.self != 2800*time.Millisecond || p.children != 100*time.Millisecond {
		t.Errorf("%+v", p)
	}
}

func TestReadRejectsEnginesWithoutAServerProcess(t *testing.T) {
	if _, err := Read(appconfig.EngineSQLite); err == nil {
		t.Error("sqlite has no server process, Read said otherwise")
	}
}

// The reading of this process agrees with what getrusage says it used
// over a stretch of spinning (to the 10 ms tick of /proc).
func TestProcessReadsThisProcessesCPU(t *testing.T) {
	before, err := Process(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	ruBefore := selfCPU(t)
	for selfCPU(t)-ruBefore < 300*time.Millisecond {
	}
	after, err := Process(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	used := selfCPU(t) - ruBefore
	if grew := after - before; grew < used-50*time.Millisecond || grew > used+50*time.Millisecond {
		t.Errorf("/proc says %v, getrusage %v", grew, used)
	}
}

func selfCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Backends that burn CPU and exit while the server is read never make a
// reading go down: each one's time is counted once, as a child while it
// runs and in its postmaster's reaped time once it is gone.
func TestPostgresReadingsNeverGoDownAsBackendsExit(t *testing.T) {
	ctx := context.Background()
	cfg := testdb.Config(t, appconfig.EnginePgSQL)
	if _, err := Read(appconfig.EnginePgSQL); err != nil {
		t.Skipf("the server does not run on this machine: %v", err)
	}
	done := make(chan struct{})
	var churn sync.WaitGroup
	for range 4 {
		churn.Go(func() {
			for range 15 {
				q, err := database.Open(ctx, cfg, database.Options{})
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := q.DB().ExecContext(ctx, "select count(*) from generate_series(1, 300000)"); err != nil {
					t.Error(err)
				}
				q.Close()
			}
		})
	}
	go func() { churn.Wait(); close(done) }()
	last, err := Read(appconfig.EnginePgSQL)
	if err != nil {
		t.Fatal(err)
	}
	readings := 0
	for {
		select {
		case <-done:
			if readings < 10 {
				t.Fatalf("only %d readings while backends came and went", readings)
			}
			return
		default:
		}
		now, err := Read(appconfig.EnginePgSQL)
		if err != nil {
			t.Fatal(err)
		}
		readings++
		if now < last {
			t.Fatalf("reading %d went down by %v while backends exited", readings, last-now)
		}
		last = now
	}
}
