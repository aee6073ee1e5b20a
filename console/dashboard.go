package console

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/laraworker/laraworker/console/internal/admincmd"
	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/internal/dashboard"
	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/httpguard"
	"github.com/laraworker/laraworker/internal/redact"
	"github.com/laraworker/laraworker/jobqueue"
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
A token sign-in lasts until "Sign out", --session-idle without a request
or --session-lifetime, whichever comes first. Wrong credentials are
limited per client and for everyone (then 429). --tls-cert and --tls-key
serve HTTPS; behind a reverse proxy, name it with --trusted-proxy so its
X-Forwarded-For/-Proto/-Host count (the session cookie is then Secure when
it says https). Changes are taken only from the dashboard's own pages
(their Origin, and a CSRF token bound to the session). --metrics-addr
follows the same rule: loopback, or LARAWORKER_METRICS_TOKEN (or
LARAWORKER_METRICS_TOKEN_FILE) as a bearer token. See docs/SECURITY.md.
Run ` + "`laraworker tables`" + ` once so the workers, pauses and history tables exist.`

func dashboardFlags(prefix string) []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: prefix + "read-only", Usage: "serve pages only: no retry, forget, cancel, pause or resume"},
		&cli.BoolFlag{Name: prefix + "hide-payloads", Usage: "never show payloads, commands, exception messages, batch names or tags (model ids) (personal data)"},
		&cli.StringFlag{Name: prefix + "tls-cert", Usage: "serve the dashboard over HTTPS with the certificate (chain) in `FILE` (PEM; with --" + prefix + "tls-key)"},
		&cli.StringFlag{Name: prefix + "tls-key", Usage: "the private key of --" + prefix + "tls-cert, in `FILE` (PEM; not readable by others)"},
		&cli.StringSliceFlag{Name: prefix + "trusted-proxy", Usage: "`ADDRESS` or range (10.0.0.0/8) of a reverse proxy in front of the dashboard, whose X-Forwarded-For, -Proto and -Host headers are believed (repeatable): the session cookie is Secure when it says https"},
		cmdline.DurationFlag(prefix+"session-idle", dashboard.DefaultSessionIdle, "a token sign-in ends after this long without a request"),
		cmdline.DurationFlag(prefix+"session-lifetime", dashboard.DefaultSessionLifetime, "a token sign-in ends this long after it began"),
	}
}

// readDashboardSetup reads the dashboard's flags (with prefix: "" for
// `dashboard`, "dashboard-" for `work`); addrFlag names the address
// flag. Bad values are usage errors.
func readDashboardSetup(c *cli.Context, prefix, addrFlag string) (dashboardSetup, error) {
	setup := dashboardSetup{addr: c.String(addrFlag), flag: addrFlag, readOnly: c.Bool(prefix + "read-only"), hidePayloads: c.Bool(prefix + "hide-payloads"),
		secrets: output.Secrets(c.App),
		tlsCert: c.String(prefix + "tls-cert"), tlsKey: c.String(prefix + "tls-key"),
		sessionIdle: cmdline.DurationOf(c, prefix+"session-idle"), sessionLifetime: cmdline.DurationOf(c, prefix+"session-lifetime")}
	if (setup.tlsCert == "") != (setup.tlsKey == "") {
		return setup, cmdline.UsageError("%s: --%stls-cert and --%stls-key go together", c.Command.Name, prefix, prefix)
	}
	proxies, err := httpguard.ParseProxies(c.StringSlice(prefix + "trusted-proxy"))
	if err != nil {
		return setup, cmdline.UsageError("%s: --%strusted-proxy %v", c.Command.Name, prefix, err)
	}
	setup.proxies = proxies
	if setup.sessionIdle == 0 || setup.sessionLifetime == 0 {
		return setup, cmdline.UsageError("%s: --%ssession-idle and --%ssession-lifetime must be more than 0", c.Command.Name, prefix, prefix)
	}
	return setup, nil
}

func dashboardCommand() *cli.Command {
	return &cli.Command{
		Name:        "dashboard",
		Usage:       "serve the web dashboard of the queue (127.0.0.1:8089 by default)",
		Description: dashboardHelp,
		Flags: append(append(cmdline.ConnectionFlags(),
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8089", Usage: "listen on `PORT or HOST:PORT` (a bare port binds 127.0.0.1; other hosts need credentials)"},
			&cli.StringFlag{Name: "metrics-addr", Usage: "serve the queue and fleet gauges on /metrics at `PORT or HOST:PORT` (a bare port binds 127.0.0.1; other hosts need " + envMetricsToken + ")"},
		), dashboardFlags("")...),
		Action: runDashboard,
	}
}

func runDashboard(c *cli.Context) error {
	log := output.Logger(c)
	setup, err := readDashboardSetup(c, "", "addr")
	if err != nil {
		return err
	}
	obs, err := readObserveFlags(c, c.String("metrics-addr"), "", log)
	if err != nil {
		return err
	}
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
	if obs.metricsAddr != "" {
		reg, err := serveRegistry(ctx, obs, conn, log)
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
	// tlsCert and tlsKey: serve HTTPS (both or neither).
	tlsCert, tlsKey              string
	proxies                      []netip.Prefix
	sessionIdle, sessionLifetime time.Duration
	// metrics, when set, get the snapshot's gauges (and keep it refreshing
	// with no one watching).
	metrics *worker.QueueMetrics
	// secrets are the app's (output.Secrets): the pages show none of them,
	// and the dashboard's credentials join them, for the logs too.
	secrets *redact.Redactor
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
	setup.secrets.Add(auth.Secrets()...)
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
		Tables: queueTables(own), Jobs: jobSource(conn, nil), Store: conn.Store, Fleet: own.Fleet, Auth: auth, ReadOnly: setup.readOnly, HidePayloads: setup.hidePayloads,
		PauseCache: conn.SharedCache(), Connection: conn.Name,
		Encrypter: enc, RetryHook: admincmd.RetryHook(enc, time.Now), Secrets: setup.secrets.Secrets(), Logger: log, Version: Version,
		TrustedProxies: setup.proxies, SessionIdle: setup.sessionIdle, SessionLifetime: setup.sessionLifetime,
		Left: leftNow(conn.Store),
	})
	if err != nil {
		return nil, err
	}
	if m := setup.metrics; m != nil {
		snap := srv.Snapshot()
		snap.AlwaysOn = true
		snap.OnRefresh = func(sum *snapshot.Summary) { exportSummary(sum, m, time.Now()) }
	}
	ln, scheme, err := dashboardListener(setup, addr)
	if err != nil {
		return nil, err
	}
	serveUntilDone(ctx, ln, srv, pageWriteTimeout, log)
	go srv.Snapshot().Run(ctx)
	log.Info().Str("addr", scheme+"://"+ln.Addr().String()+"/").Bool("read_only", setup.readOnly).
		Bool("hide_payloads", setup.hidePayloads).Bool("auth", auth.Configured()).Msg("serving the dashboard")
	return srv, nil
}

// dashboardListener listens on addr, over TLS when the setup names a
// certificate; scheme is "https" or "http".
func dashboardListener(setup dashboardSetup, addr string) (ln net.Listener, scheme string, err error) {
	var cfg *tls.Config
	if setup.tlsCert != "" {
		if cfg, err = loadTLS(strings.TrimSuffix(setup.flag, "addr"), setup.tlsCert, setup.tlsKey); err != nil {
			return nil, "", err
		}
	}
	if ln, err = listen(setup.flag, addr); err != nil {
		return nil, "", err
	}
	if cfg == nil {
		return ln, "http", nil
	}
	return tls.NewListener(ln, cfg), "https", nil
}

// loadTLS reads the dashboard's certificate and key. A key others can
// read is refused, as the credentials file is.
func loadTLS(prefix, certFile, keyFile string) (*tls.Config, error) {
	st, err := os.Stat(keyFile)
	if err != nil {
		return nil, fmt.Errorf("--%stls-key: %w", prefix, err)
	}
	if st.Mode().Perm()&0o004 != 0 {
		return nil, fmt.Errorf("--%stls-key %s is readable by others (mode %v): chmod o-r it", prefix, keyFile, st.Mode().Perm())
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--%stls-cert, --%stls-key: %w", prefix, prefix, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// serveRegistry serves a fresh Prometheus registry on /metrics (with
// /healthz) at obs's metrics address.
func serveRegistry(ctx context.Context, obs observeSetup, conn *queueconn.Connection, log zerolog.Logger) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	if err := serveOn(ctx, obs, reg, conn.Ping, nil, nil, log); err != nil {
		return nil, err
	}
	return reg, nil
}

// leftNow is what the store's claims (the worker's, when the dashboard
// runs beside it) leave in place for PHP workers; nil for a store that
// leaves none.
func leftNow(store jobqueue.Store) func() []jobqueue.LeftJobs {
	if lr, ok := store.(jobqueue.LeftReporter); ok {
		return lr.LeftNow
	}
	return nil
}

// exportSummary sets the queue and fleet gauges of the worker's metrics
// from a dashboard summary (the snapshot names no worker type: it sits
// below the engine).
func exportSummary(sum *snapshot.Summary, m *worker.QueueMetrics, now time.Time) {
	m.Depth.Reset()
	m.OldestReady.Reset()
	for _, q := range sum.Queues {
		m.Depth.WithLabelValues(q.Queue, "ready").Set(float64(q.Ready))
		m.Depth.WithLabelValues(q.Queue, "delayed").Set(float64(q.Delayed))
		m.Depth.WithLabelValues(q.Queue, "reserved").Set(float64(q.Reserved))
		m.Depth.WithLabelValues(q.Queue, "expired").Set(float64(q.Expired))
		m.OldestReady.WithLabelValues(q.Queue).Set(q.OldestReady.Seconds())
	}
	m.Failed.Reset()
	for _, f := range sum.FailedByQueue {
		m.Failed.WithLabelValues(f.Name).Set(float64(f.Count))
	}
	byKind := map[string]int{fleet.KindGo: 0, fleet.KindPHP: 0}
	held := sum.Held()
	var last int64
	for _, w := range sum.Workers {
		last = max(last, w.LastSeenAt)
		if snapshot.Alive(snapshot.WorkerState(w, held, now)) {
			byKind[w.Kind]++
		}
	}
	for kind, n := range byKind {
		m.Workers.WithLabelValues(kind).Set(float64(n))
	}
	m.LastSeen.Set(float64(last))
}
