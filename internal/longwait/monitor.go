package longwait

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/laraworker/laraworker/internal/clock"
	"github.com/rs/zerolog"
)

// Measure is one queue's wait as read now.
type Measure struct {
	Queue string
	// Ready counts the jobs available now.
	Ready int64
	// Oldest is how long the oldest ready job has been available (0: none
	// is ready).
	Oldest time.Duration
	// Runtime is the mean runtime of the queue's jobs lately (0: unknown),
	// Capacity how many jobs the live workers serving the queue run at
	// once (a Go worker counts its concurrency).
	Runtime  time.Duration
	Capacity int64
}

// Estimate is Horizon's WaitTimeCalculator's wait with Go's workers
// counted: the time to clear the ready jobs, ready × runtime ÷ capacity
// (÷ 1 when no live worker serves the queue, as Horizon divides); 0 when
// the runtime is unknown.
func (m Measure) Estimate() time.Duration {
	return time.Duration(m.Ready) * m.Runtime / time.Duration(max(m.Capacity, 1))
}

// ErrNotReady is a Source's answer while it cannot tell waits yet (its
// first read of a large queue is under way): the check is skipped, no
// alert changes.
var ErrNotReady = errors.New("longwait: the queue's first read is not done yet")

// Source measures queues' waits.
type Source interface {
	Measure(ctx context.Context, queues []string) ([]Measure, error)
}

// Alert is a threshold crossed (or, Cleared, the wait back under it).
type Alert struct {
	Connection, Queue string
	Wait, Threshold   time.Duration
	Ready             int64
	Estimate          time.Duration
	Capacity          int64
	Cleared           bool
	At                time.Time
	// Reporter says who reports it ("laraworker work on web-1").
	Reporter string
}

// Notifier delivers alerts beside the log and the metrics (a webhook).
type Notifier interface {
	Notify(ctx context.Context, a Alert) error
}

// Config is a Monitor's settings.
type Config struct {
	// Connection is the queue connection watched; Queues its queues (the
	// worker's, and the ones Thresholds name on it).
	Connection string
	Queues     []string
	Thresholds Thresholds
	// Every is how often the waits are checked. Default 15s.
	Every     time.Duration
	Source    Source
	Notifiers []Notifier
	// Metrics records the waits and alerts; nil records nothing.
	Metrics  *Metrics
	Logger   zerolog.Logger
	Clock    clock.Clock
	Reporter string
}

// DefaultEvery is how often the waits are checked by default.
const DefaultEvery = 15 * time.Second

// Monitor checks the waits every Config.Every and raises one alert per
// crossing of a threshold, and a clearance when the wait drops back to it
// or under.
type Monitor struct {
	cfg    Config
	queues []string // watched: the threshold is not 0
	mu     sync.Mutex
	// alerting are the queues over their threshold at the last check.
	alerting map[string]bool
	checks   atomic.Int64
}

// New checks cfg and makes the monitor.
func New(cfg Config) (*Monitor, error) {
	if cfg.Source == nil || cfg.Connection == "" {
		return nil, errors.New("longwait: a monitor needs a connection and a source")
	}
	if cfg.Every <= 0 {
		cfg.Every = DefaultEvery
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System(nil)
	}
	m := &Monitor{cfg: cfg, alerting: map[string]bool{}}
	for _, q := range slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(cfg.Queues), cfg.Thresholds.Queues(cfg.Connection)...)))) {
		if threshold, on := cfg.Thresholds.Of(cfg.Connection, q); on {
			m.queues = append(m.queues, q)
			cfg.Metrics.threshold(cfg.Connection, q, threshold)
		}
	}
	return m, nil
}

// Queues are the queues checked, with their thresholds.
func (m *Monitor) Queues() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, q := range m.queues {
		out[q], _ = m.cfg.Thresholds.Of(m.cfg.Connection, q)
	}
	return out
}

// Checks counts the checks made (tests wait on it).
func (m *Monitor) Checks() int64 { return m.checks.Load() }

// Run checks at once, then every Config.Every, until ctx ends.
func (m *Monitor) Run(ctx context.Context) {
	if len(m.queues) == 0 {
		return
	}
	t := m.cfg.Clock.NewTicker(m.cfg.Every)
	defer t.Stop()
	for {
		if err := m.Check(ctx); err != nil && ctx.Err() == nil {
			if errors.Is(err, ErrNotReady) {
				m.cfg.Logger.Debug().Msg("long waits: the queue's first read is not done; check skipped")
			} else {
				m.cfg.Logger.Warn().Err(err).Msg("long waits: reading the queues' waits failed; alerts stay as they were")
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// Check measures the watched queues once and raises or clears alerts.
func (m *Monitor) Check(ctx context.Context) error {
	defer m.checks.Add(1)
	measures, err := m.cfg.Source.Measure(ctx, m.queues)
	if err != nil {
		return err
	}
	now := m.cfg.Clock.Now()
	for _, ms := range measures {
		threshold, on := m.cfg.Thresholds.Of(m.cfg.Connection, ms.Queue)
		if !on {
			continue
		}
		m.cfg.Metrics.measured(m.cfg.Connection, ms)
		over := ms.Oldest > threshold
		m.mu.Lock()
		changed := over != m.alerting[ms.Queue]
		m.alerting[ms.Queue] = over
		m.mu.Unlock()
		if !changed {
			continue
		}
		a := Alert{Connection: m.cfg.Connection, Queue: ms.Queue, Wait: ms.Oldest, Threshold: threshold, Ready: ms.Ready,
			Estimate: ms.Estimate(), Capacity: ms.Capacity, Cleared: !over, At: now, Reporter: m.cfg.Reporter}
		m.raise(ctx, a)
	}
	return nil
}

// raise logs, counts and delivers an alert or its clearance.
func (m *Monitor) raise(ctx context.Context, a Alert) {
	m.cfg.Metrics.alert(a)
	ev := m.cfg.Logger.Warn()
	msg := "long wait: the oldest ready job has waited longer than the queue's threshold"
	if a.Cleared {
		ev, msg = m.cfg.Logger.Info(), "long wait over: the oldest ready job waits no longer than the queue's threshold"
	}
	ev.Str("connection", a.Connection).Str("queue", a.Queue).Dur("wait", a.Wait).Dur("threshold", a.Threshold).
		Int64("ready", a.Ready).Dur("estimate", a.Estimate).Int64("capacity", a.Capacity).Msg(msg)
	for _, n := range m.cfg.Notifiers {
		if err := n.Notify(ctx, a); err != nil {
			m.cfg.Metrics.deliveryFailed()
			m.cfg.Logger.Error().Err(err).Str("queue", a.Queue).Bool("cleared", a.Cleared).Msg("long wait: the alert could not be delivered")
		}
	}
}

// Text is the alert as one line of a chat message.
func (a Alert) Text() string {
	where := fmt.Sprintf("queue `%s` (connection `%s`)", a.Queue, a.Connection)
	if a.Cleared {
		return fmt.Sprintf(":white_check_mark: Wait back to normal on %s: the oldest ready job waits %s, within the %s threshold. %s",
			where, round(a.Wait), round(a.Threshold), a.Reporter)
	}
	est := ""
	if a.Estimate > 0 {
		est = fmt.Sprintf(" Clearing them takes about %s at %d jobs at a time.", round(a.Estimate), max(a.Capacity, 1))
	}
	return fmt.Sprintf(":warning: Long wait on %s: the oldest ready job has waited %s, over the %s threshold; %d jobs are ready.%s %s",
		where, round(a.Wait), round(a.Threshold), a.Ready, est, a.Reporter)
}

func round(d time.Duration) time.Duration { return d.Round(time.Second) }
