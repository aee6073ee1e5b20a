package console

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/console/internal/admincmd"
	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/dashboard"
	"github.com/laraworker/laraworker/dashboard/snapshot"
	"github.com/laraworker/laraworker/worker"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

const dashboardHelp = `Serves the web dashboard of the app's queue connection (database or redis):
queues and their wait, the workers, running, pending, recent and failed
jobs, jobs tagged by the models they hold, metrics per class (throughput,
runtime and wait), batches; retry and forget failed jobs (as queue:retry
and queue:forget), cancel a batch and retry its failed jobs (as
queue:retry-batch); pause and resume Go workers per worker or per queue.
On a redis connection the counts are the whole queues', the jobs listed
the first 100 of each queue; failed jobs and the fleet are in the app's
database.

It binds 127.0.0.1 by default. Any other address needs credentials, read
from the environment or from the file LARAWORKER_DASHBOARD_AUTH_FILE names
(KEY=VALUE lines, mode 600), never from a flag:
  LARAWORKER_DASHBOARD_TOKEN=...     (a token: sign in on /login, or send
                                      Authorization: Bearer ...)
  LARAWORKER_DASHBOARD_USER=... and LARAWORKER_DASHBOARD_PASSWORD=...
                                     (HTTP basic authentication)
Run ` + "`laraworker tables`" + ` once so the workers, pauses and history tables exist.`

func dashboardFlags(prefix string) []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: prefix + "read-only", Usage: "serve pages only: no retry, forget, cancel, pause or resume"},
		&cli.BoolFlag{Name: prefix + "hide-payloads", Usage: "never show payloads, commands, exception messages, batch names or tags (model ids) (personal data)"},
	}
}

func dashboardCommand() *cli.Command {
	return &cli.Command{
		Name:        "dashboard",
		Usage:       "serve the web dashboard of the queue (127.0.0.1:8089 by default)",
		Description: dashboardHelp,
		Flags: append(append(cmdline.ConnectionFlags(),
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8089", Usage: "listen on `PORT or HOST:PORT` (a bare port binds 127.0.0.1; other hosts need credentials)"},
			&cli.StringFlag{Name: "metrics-addr", Usage: "serve the queue and fleet gauges on /metrics at `PORT or HOST:PORT`"},
		), dashboardFlags("")...),
		Action: runDashboard,
	}
}

func runDashboard(c *cli.Context) error {
	log := output.Logger(c)
	cfg, info, err := queueconn.LoadAppConfig(c, cmdline.ConnectionOverrides(c))
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	defer stop()
	conn, err := queueconn.Open(ctx, cfg, info, queueconn.Options{})
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer conn.Close()
	setup := dashboardSetup{addr: c.String("addr"), flag: "addr", readOnly: c.Bool("read-only"), hidePayloads: c.Bool("hide-payloads")}
	if addr := c.String("metrics-addr"); addr != "" {
		reg, err := serveRegistry(ctx, "metrics-addr", addr, conn, log)
		if err != nil {
			return cli.Exit(err.Error(), 1)
		}
		setup.metrics = worker.NewQueueMetrics(reg, nil)
	}
	if _, err := startDashboard(ctx, conn, setup, log); err != nil {
		return cli.Exit(err.Error(), 1)
	}
	<-ctx.Done()
	return nil
}

// dashboardSetup is how a dashboard is served (by `dashboard` or `work
// --dashboard-addr`).
type dashboardSetup struct {
	addr, flag             string
	readOnly, hidePayloads bool
	// metrics, when set, get the snapshot's gauges (and keep it refreshing
	// with no one watching).
	metrics *worker.QueueMetrics
}

// startDashboard checks the bind address against the credentials,
// listens, and serves the dashboard and its snapshot until ctx ends.
func startDashboard(ctx context.Context, conn *queueconn.Connection, setup dashboardSetup, log zerolog.Logger) (*dashboard.Server, error) {
	own, err := conn.Database("the dashboard")
	if err != nil {
		return nil, err
	}
	auth, err := dashboard.LoadAuth(os.Environ())
	if err != nil {
		return nil, err
	}
	addr, err := listenAddr(setup.flag, setup.addr)
	if err != nil {
		return nil, err
	}
	if err := dashboard.CheckBind(addr, auth); err != nil {
		return nil, err
	}
	enc, err := queueconn.Encrypter(conn.Cfg)
	if err != nil {
		return nil, err
	}
	srv, err := dashboard.New(dashboard.Options{
		Tables: own.Tables, Jobs: own.Jobs, Failed: conn.Failed, Batches: conn.Batches, Fleet: own.Fleet, Auth: auth, ReadOnly: setup.readOnly, HidePayloads: setup.hidePayloads,
		Encrypter: enc, RetryHook: admincmd.RetryHook(enc, time.Now), Secrets: secretsOf(conn.Cfg), Logger: log, Version: Version,
	})
	if err != nil {
		return nil, err
	}
	if m := setup.metrics; m != nil {
		snap := srv.Snapshot()
		snap.AlwaysOn = true
		snap.OnRefresh = func(sum *snapshot.Summary) { sum.Export(m, time.Now()) }
	}
	ln, err := listen(setup.flag, addr)
	if err != nil {
		return nil, err
	}
	serveUntilDone(ctx, ln, srv)
	go srv.Snapshot().Run(ctx)
	log.Info().Str("addr", "http://"+ln.Addr().String()+"/").Bool("read_only", setup.readOnly).
		Bool("hide_payloads", setup.hidePayloads).Bool("auth", auth.Configured()).Msg("serving the dashboard")
	return srv, nil
}

// secretsOf are the values of cfg's secrets, which the dashboard never
// shows.
func secretsOf(cfg appconfig.Config) []string {
	secrets := []string{cfg.Password.Reveal(), cfg.AppKey.Reveal()}
	for _, k := range cfg.AppPreviousKeys {
		secrets = append(secrets, k.Reveal())
	}
	return secrets
}

// serveRegistry serves a fresh Prometheus registry on /metrics (with
// /healthz) at addr.
func serveRegistry(ctx context.Context, flag, addr string, conn *queueconn.Connection, log zerolog.Logger) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	if err := serveOn(ctx, flag, addr, reg, conn.Ping, nil, log); err != nil {
		return nil, err
	}
	return reg, nil
}
