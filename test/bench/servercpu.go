package bench

import (
	"time"

	"github.com/laraworker/laraworker/internal/servercpu"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// serverCPU is the CPU time the database server has used so far, when it
// runs on this machine: a drain reads it before and after. ok is false for
// SQLite (the server is the worker: its cost is in the worker's CPU) and
// for a server on another host. The server is shared: whatever else runs
// on it (other benchmarks, other tests) is counted too, hence the load
// reported with every figure.
func (b *runner) serverCPU() (time.Duration, bool) {
	if b.cfg.Driver == appconfig.EngineSQLite || !localHost(b.cfg.Host, b.cfg.Socket) {
		return 0, false
	}
	d, err := servercpu.Read(b.cfg.Driver)
	return d, err == nil
}

func localHost(host, socket string) bool {
	switch host {
	case "", "localhost", "127.0.0.1", "::1":
		return true
	}
	return socket != ""
}

// serverMeter measures the server's CPU over one drain.
type serverMeter struct {
	b     *runner
	start time.Duration
	ok    bool
}

func (b *runner) startServerMeter() serverMeter {
	start, ok := b.serverCPU()
	return serverMeter{b: b, start: start, ok: ok}
}

// per1k is the server's CPU milliseconds per 1,000 jobs since the start
// (0 when not measured).
func (m serverMeter) per1k(jobs int) float64 {
	if !m.ok || jobs <= 0 {
		return 0
	}
	end, ok := m.b.serverCPU()
	if !ok {
		return 0
	}
	return float64((end - m.start).Milliseconds()) / float64(jobs) * 1000
}
