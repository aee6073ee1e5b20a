package worker

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testdb"
	"github.com/laraworker/laraworker/laravel"
)

// faultProxy sits between the worker and the database server. Cut drops
// every connection and refuses new ones, as a database that went away
// does; Restore lets connections through again.
type faultProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

func newFaultProxy(t *testing.T, target string) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.Cut() })
	return p
}

func (p *faultProxy) addr() (string, int) {
	a := p.ln.Addr().(*net.TCPAddr)
	return a.IP.String(), a.Port
}

func (p *faultProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		go p.pipe(c)
	}
}

func (p *faultProxy) pipe(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	p.mu.Lock()
	p.conns[client], p.conns[server] = true, true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(server, client); server.Close() }()
	_, _ = io.Copy(client, server)
	client.Close()
}

// Cut closes every connection and refuses new ones.
func (p *faultProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Restore accepts connections again.
func (p *faultProxy) Restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// TestDatabaseOutagesLoseNothing cuts the database away several times while
// a worker runs 400 jobs: claims fail and are retried, outcomes decided
// while the database is away are written once it is back, and every job
// runs to completion.
func TestDatabaseOutagesLoseNothing(t *testing.T) {
	for _, engine := range []string{laravel.EngineMySQL, laravel.EnginePgSQL} {
		t.Run(engine, func(t *testing.T) {
			cfg := testdb.Config(t, engine)
			admin := testdb.Open(t, cfg) // creates (and later drops) the tables directly
			proxy := newFaultProxy(t, net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
			cfg.Host, cfg.Port = proxy.addr()
			cfg.RetryAfter = 5
			q, err := laravel.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()

			const n = 400
			pushNumbered(t, admin, classA, n)
			runs := newCounter()
			reg := handlers.NewRegistry()
			reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error {
				runs.add(job)
				time.Sleep(2 * time.Millisecond)
				return nil
			})
			opts := testConfig()
			opts.Concurrency = 8
			opts.LeaseEvery = time.Second
			// A claim whose commit is cut may have reserved its rows: they
			// come back after retry_after with that attempt counted, as after
			// a crash. One spare try keeps such a job from failing.
			opts.Tries = 2
			w, logs := newTestWorker(t, q, reg, opts, nil)
			run := startWorker(w, 2*time.Minute)

			for i := 0; i < 4; i++ {
				time.Sleep(150 * time.Millisecond)
				proxy.Cut()
				time.Sleep(700 * time.Millisecond)
				proxy.Restore()
			}
			run.wait(t)
			// A claim whose commit was cut may have reserved rows nobody runs:
			// like a crashed worker's, they come back after retry_after.
			if left := jobRows(t, admin); len(left) != 0 {
				for _, r := range left {
					if !r.ReservedAt.Valid || r.Attempts != 1 {
						t.Fatalf("a job left after the outages is not an orphaned reservation: %+v", r)
					}
				}
				t.Logf("%s: %d reservations orphaned by cut commits; rerunning after retry_after", engine, len(left))
				time.Sleep(time.Duration(cfg.RetryAfter+1) * time.Second)
				w, _ = newTestWorker(t, q, reg, opts, nil)
				runWorker(t, w, time.Minute)
			}
			if left := jobRows(t, admin); len(left) != 0 {
				t.Fatalf("%d jobs left after the outages", len(left))
			}
			if f := failedRows(t, admin); len(f) != 0 {
				t.Fatalf("%d jobs failed: an outage must never fail a job; first: %s", len(f), f[0].Exception)
			}
			twice := 0
			for _, c := range runs.runs {
				if c > 1 {
					twice++
				}
			}
			if len(runs.runs) != n {
				t.Fatalf("%d distinct jobs ran, want %d", len(runs.runs), n)
			}
			t.Logf("%s: %d jobs, %d ran more than once (a claim whose commit was cut), log has %d database errors",
				engine, n, twice, countLines(logs.String(), "failed"))
			mustContain(t, "log", logs.String(), "retrying")
		})
	}
}

func countLines(s, sub string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			n++
		}
	}
	return n
}
