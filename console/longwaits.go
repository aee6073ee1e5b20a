package console

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/longwait"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

// The long-wait webhook is a credential (a Slack webhook's URL carries its
// token): it is read from the environment or a file, never from a flag.
const (
	envLongWaitWebhook     = "LARAWORKER_LONG_WAIT_WEBHOOK"
	envLongWaitWebhookFile = "LARAWORKER_LONG_WAIT_WEBHOOK_FILE"
)

// longWaitFlags are work's long-wait flags.
func longWaitFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "long-waits", Value: "auto", EnvVars: []string{"LARAWORKER_LONG_WAITS"},
			Usage: "alert when a queue's oldest ready job waits longer than its threshold (docs/LONG-WAITS.md): auto (when --long-wait, --long-wait-file or " + envLongWaitWebhook + " is given), on or off"},
		&cli.StringSliceFlag{Name: "long-wait", Usage: "`CONNECTION:QUEUE=SECONDS` long-wait threshold, as Horizon's waits (repeatable; 0 turns a queue's check off; a queue not named waits 60 s)"},
		&cli.StringFlag{Name: "long-wait-file", Usage: "`FILE` of long-wait thresholds, a JSON object in Horizon's waits shape: {\"redis:default\": 60}"},
		cmdline.DurationFlag("long-wait-every", longwait.DefaultEvery, "how often the long waits are checked"),
	}
}

// longWaitSetup is what the long-wait flags say, read and checked before
// anything is opened.
type longWaitSetup struct {
	mode string
	// given are the thresholds of --long-wait and --long-wait-file (the
	// flags win); nil: none given.
	given   longwait.Thresholds
	every   time.Duration
	webhook *longwait.Webhook
}

func readLongWaitFlags(c *cli.Context) (longWaitSetup, error) {
	s := longWaitSetup{mode: c.String("long-waits"), every: cmdline.DurationOf(c, "long-wait-every")}
	if s.mode != "auto" && s.mode != "on" && s.mode != "off" {
		return s, cmdline.UsageError("work: --long-waits %q: want auto, on or off", s.mode)
	}
	if s.every <= 0 {
		return s, cmdline.UsageError("work: --long-wait-every must be more than 0")
	}
	if f := c.String("long-wait-file"); f != "" {
		t, err := longwait.ReadFile(f)
		if err != nil {
			return s, cli.Exit("work: "+err.Error(), 1)
		}
		s.given = t
	}
	if v := c.StringSlice("long-wait"); len(v) > 0 {
		t, err := longwait.ParseFlags(v)
		if err != nil {
			return s, cmdline.UsageError("work: %v", err)
		}
		s.given = mergeThresholds(s.given, t)
	}
	url, err := loadLongWaitWebhook(os.Environ())
	if err != nil {
		return s, cli.Exit("work: "+err.Error(), 1)
	}
	if url != "" {
		if s.webhook, err = longwait.NewWebhook(url, nil); err != nil {
			return s, cli.Exit("work: "+envLongWaitWebhook+": "+err.Error(), 1)
		}
	}
	return s, nil
}

func mergeThresholds(base, over longwait.Thresholds) longwait.Thresholds {
	out := longwait.Thresholds{}
	maps.Copy(out, base)
	maps.Copy(out, over)
	return out
}

// loadLongWaitWebhook reads the webhook's URL from the environment or
// the file its _FILE variable names (not readable by others).
func loadLongWaitWebhook(environ []string) (string, error) {
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	url, file := env[envLongWaitWebhook], env[envLongWaitWebhookFile]
	switch {
	case url != "" && file != "":
		return "", fmt.Errorf("set %s or %s, not both", envLongWaitWebhook, envLongWaitWebhookFile)
	case file == "":
		return url, nil
	}
	st, err := os.Stat(file)
	if err != nil {
		return "", fmt.Errorf("%s: %w", envLongWaitWebhookFile, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s %s is readable by others (mode %v): chmod 600 it", envLongWaitWebhookFile, file, st.Mode().Perm())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s: %w", envLongWaitWebhookFile, err)
	}
	if url = strings.TrimSpace(string(b)); url == "" {
		return "", fmt.Errorf("%s %s is empty", envLongWaitWebhookFile, file)
	}
	return url, nil
}

// on says whether the alerts run: asked for, or something to alert with
// was given.
func (s longWaitSetup) on() bool {
	return s.mode == "on" || (s.mode == "auto" && (len(s.given) > 0 || s.webhook != nil))
}

// thresholds are the flags' and file's, else the app's Horizon waits.
func (s longWaitSetup) thresholds(info appconfig.AppInfo) (longwait.Thresholds, string, error) {
	if len(s.given) > 0 {
		return s.given, "--long-wait", nil
	}
	if info.HorizonWaits != nil {
		t, err := longwait.FromHorizon(info.HorizonWaits)
		return t, "horizon.waits", err
	}
	return longwait.Thresholds{}, "default", nil
}

// startLongWaits runs the long-wait monitor of the served connection's
// queues (the worker's, and those the thresholds name on it) until ctx
// ends; nothing when it is off.
func startLongWaits(ctx context.Context, s longWaitSetup, conn *queueconn.Connection, info appconfig.AppInfo, queues []string, metrics bool, log zerolog.Logger) error {
	if !s.on() {
		return nil
	}
	thresholds, from, err := s.thresholds(info)
	if err != nil {
		return err
	}
	if others := thresholds.Others(conn.Name); len(others) > 0 {
		log.Warn().Strs("thresholds", others).Str("connection", conn.Name).
			Msg("long waits: these thresholds name another queue connection than the one this worker serves; a worker serving that connection watches them")
	}
	own, err := conn.Database("the long-wait alerts (the fleet's workers and runtimes)")
	if err != nil {
		return err
	}
	watched := slices.Concat(queues, thresholds.Queues(conn.Name))
	snap, err := snapshot.New(snapshot.Config{Tables: queueTables(own), Jobs: jobSource(conn, watched), Fleet: own.Fleet, Logger: log,
		Clean: func(msg string) string { return queueconn.ErrorLine(conn.Cfg, msg) }})
	if err != nil {
		return err
	}
	snap.AlwaysOn = true
	cfg := longwait.Config{Connection: conn.Name, Queues: watched, Thresholds: thresholds, Every: s.every, Logger: log,
		Source: &longwait.SnapshotSource{Snapshot: snap, Fleet: own.Fleet}, Reporter: "(laraworker work on " + hostname() + ")"}
	if s.webhook != nil {
		cfg.Notifiers = []longwait.Notifier{s.webhook}
	}
	if metrics {
		if cfg.Metrics, err = longWaitMetrics(); err != nil {
			return err
		}
	}
	m, err := longwait.New(cfg)
	if err != nil {
		return err
	}
	logWatched(log, m.Queues(), from, s)
	go snap.Run(ctx)
	go m.Run(ctx)
	return nil
}

// logWatched is the start line: each queue and its threshold, where they
// came from, where alerts go.
func logWatched(log zerolog.Logger, queues map[string]time.Duration, from string, s longWaitSetup) {
	d := zerolog.Dict()
	for q, t := range queues {
		d = d.Str(q, t.String())
	}
	log.Info().Dict("thresholds", d).Str("from", from).Dur("every", s.every).Bool("webhook", s.webhook != nil).
		Msg("watching long waits: an alert when a queue's oldest ready job waits longer than its threshold (--long-waits)")
}

// longWaitMetrics registers the monitor's gauges where /metrics reads.
func longWaitMetrics() (m *longwait.Metrics, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("--long-waits: registering the long-wait metrics failed")
		}
	}()
	return longwait.NewMetrics(prometheus.DefaultRegisterer), nil
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "an unknown host"
	}
	return h
}
