package console

import (
	"context"
	"errors"
	"fmt"

	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/internal/pulse"
	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/internal/sqldb"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/rs/zerolog"
)

// --pulse: record Laravel Pulse's Queues and Slow Jobs entries for the
// jobs Go runs.
const (
	pulseAuto = "auto"
	pulseOn   = "on"
	pulseOff  = "off"
)

func checkPulseFlag(v string) error {
	switch v {
	case pulseAuto, pulseOn, pulseOff:
		return nil
	}
	return fmt.Errorf("--pulse %q: want auto (when the app runs Laravel Pulse), on or off", v)
}

// pulseRecorder is the recorder `work` runs beside the worker, and what
// to close when it is done.
type pulseRecorder struct {
	rec   *pulse.Recorder
	close func()
}

// startPulse sets the recorder up from the app's Pulse configuration, as
// --pulse says: nil when Pulse does not record (off, not installed,
// disabled). A configuration Go cannot honour is an error naming it.
func startPulse(ctx context.Context, mode string, conn *queueconn.Connection, info appconfig.AppInfo, log zerolog.Logger) (*pulseRecorder, error) {
	if mode == pulseOff {
		return nil, nil
	}
	settings, active, err := pulse.FromLaravel(info.Pulse)
	if err == nil {
		err = info.PulseErr
	}
	if err != nil {
		return nil, fmt.Errorf("work: Laravel Pulse: %v (--pulse off records nothing in Pulse)", err)
	}
	if !active {
		if mode == pulseOn {
			return nil, fmt.Errorf("work: --pulse on: %s", pulseAbsence(info))
		}
		return nil, nil
	}
	ingest, closeIngest, where, err := pulseIngest(ctx, settings, conn, info)
	if err != nil {
		return nil, fmt.Errorf("work: Laravel Pulse's %s ingest: %w (--pulse off records nothing in Pulse)", settings.Ingest, err)
	}
	rec := pulse.New(settings, ingest, pulse.Options{Logger: log, DefaultQueue: conn.Cfg.DefaultQueue})
	log.Info().Bool("queues", settings.Queues != nil).Bool("slow_jobs", settings.SlowJobs != nil).Str("ingest", settings.Ingest).Str("to", where).
		Msg("recording Laravel Pulse's Queues and Slow Jobs entries for the jobs this worker runs, as Pulse's recorders do after a PHP worker (--pulse)")
	return &pulseRecorder{rec: rec, close: closeIngest}, nil
}

// pulseAbsence says why Pulse would record nothing for this app.
func pulseAbsence(info appconfig.AppInfo) string {
	p := info.Pulse
	switch {
	case p == nil && info.Source != "php":
		return "Pulse's configuration is read through the app's PHP, and it was not (" + queueconn.OrString(info.Why, "no app folder") + ")"
	case p == nil:
		return "laravel/pulse is not installed in the app"
	case !p.Registered:
		return "the app does not register Laravel\\Pulse\\PulseServiceProvider"
	case !p.Enabled:
		return "pulse.enabled is false"
	}
	return "Pulse records no job here: neither its Queues nor its SlowJobs recorder is registered, or pulse.ingest.driver is null"
}

// pulseIngest opens where Pulse's entries go: its tables on its database
// connection (the queue's own pool when it is the same connection), or
// its Redis stream on pulse.ingest.redis.connection.
func pulseIngest(ctx context.Context, s pulse.Settings, conn *queueconn.Connection, info appconfig.AppInfo) (pulse.Ingest, func(), string, error) {
	if s.Ingest == pulse.IngestRedis {
		if info.SharedRedis == nil {
			return nil, nil, "", errors.New("the app's config('database.redis') was not read")
		}
		rc, err := redisproto.RedisConnection(s.RedisConnection, info.SharedRedis.Redis, info.Version)
		if err != nil {
			return nil, nil, "", err
		}
		rdb, err := redisproto.NewClient(rc)
		if err != nil {
			return nil, nil, "", err
		}
		st := pulse.NewStream(rdb, s, nil)
		return st, func() { rdb.Close() }, "redis connection " + s.RedisConnection + ", stream " + st.Key(), nil
	}
	cfg, pool, closeDB := conn.Cfg, conn.DB(), func() {}
	if p := info.Pulse; p.DB != nil {
		db, err := sqldb.Open(ctx, *p.DB, sqldb.Options{})
		if err != nil {
			return nil, nil, "", fmt.Errorf("database connection %q: %w", p.DBConnection, err)
		}
		cfg, pool, closeDB = *p.DB, db.Pool, func() { db.Close() }
	}
	if pool == nil {
		return nil, nil, "", errors.New("the queue connection has no SQL database")
	}
	st, err := pulse.NewStorage(ctx, cfg, pool, s, nil)
	if err != nil {
		closeDB()
		return nil, nil, "", err
	}
	entries, aggregates, _ := st.Tables()
	return st, closeDB, fmt.Sprintf("database connection %s, tables %s and %s", info.Pulse.DBConnection, entries, aggregates), nil
}

// run ingests until the returned stop is called (after the worker's
// last job: a stop signal does not end it before), which waits for the
// last batch.
func (p *pulseRecorder) run(ctx context.Context) (stop func()) {
	if p == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { p.rec.Run(ctx); close(done) }()
	return func() {
		cancel()
		<-done
		p.close()
	}
}
