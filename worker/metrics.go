package worker

import (
	"slices"
	"time"

	"github.com/laraworker/laraworker/worker/internal/configproblem"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the worker's Prometheus collectors. A nil *Metrics records
// nothing.
type Metrics struct {
	jobs        *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	claim       prometheus.Histogram
	claimErrors prometheus.Counter
	writeErrors *prometheus.CounterVec
	leases      prometheus.Counter
	config      *prometheus.CounterVec
	lost        *prometheus.CounterVec
	dropped     *prometheus.CounterVec
	interrupted *prometheus.CounterVec
	// Depth is set by whoever polls queue sizes (the CLI does).
	Depth *prometheus.GaugeVec
}

// NewMetrics registers the collectors on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "laraworker_jobs_total", Help: "Jobs handled, by class, queue and outcome.",
		}, []string{"class", "queue", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "laraworker_job_duration_seconds", Help: "Time from claim to decided outcome.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"class", "queue"}),
		claim: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "laraworker_claim_seconds", Help: "Latency of claim transactions.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 3, 10),
		}),
		claimErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "laraworker_claim_errors_total", Help: "Claims that failed (database errors).",
		}),
		writeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "laraworker_write_errors_total", Help: "Outcome writes that failed and were retried.",
		}, []string{"op"}),
		leases: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "laraworker_leases_extended_total", Help: "Reservations refreshed for long-running jobs.",
		}),
		config: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "laraworker_config_errors_total", Help: "Configuration problems met (app_key, schema, permission, middleware, debounce): jobs given back or writes retried, never failed.",
		}, []string{"kind"}),
		lost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "laraworker_lost_reservations_total",
			Help: "Jobs whose reservation another worker had taken (after retry_after) when this worker wrote or refreshed it; the outcome was dropped. op: the write that found out.",
		}, []string{"op"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "laraworker_outcomes_dropped_total",
			Help: "Outcomes not written by the write deadline at shutdown (the jobs come back after retry_after), by write.",
		}, []string{"op"}),
		interrupted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "laraworker_jobs_interrupted_total",
			Help: "Jobs a stop signal cut short (still running when --grace ended), by queue and class; attempt: restored (given back as before the claim) or counted (cut short too many times in a row).",
		}, []string{"queue", "class", "attempt"}),
		Depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "laraworker_queue_depth", Help: "Jobs in the table by queue and state.",
		}, []string{"queue", "state"}),
	}
	reg.MustRegister(m.jobs, m.duration, m.claim, m.claimErrors, m.writeErrors, m.leases, m.config, m.lost, m.dropped, m.interrupted, m.Depth)
	return m
}

func (m *Metrics) jobDone(queue, class, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.jobs.WithLabelValues(class, queue, outcome).Inc()
	m.duration.WithLabelValues(class, queue).Observe(d.Seconds())
}

func (m *Metrics) observeClaim(d time.Duration) {
	if m != nil {
		m.claim.Observe(d.Seconds())
	}
}

func (m *Metrics) claimError() {
	if m != nil {
		m.claimErrors.Inc()
	}
}

func (m *Metrics) writeError(op string) {
	if m != nil {
		m.writeErrors.WithLabelValues(op).Inc()
	}
}

func (m *Metrics) leasesExtended(n int) {
	if m != nil {
		m.leases.Add(float64(n))
	}
}

func (m *Metrics) configError(kind string) {
	if m != nil {
		m.config.WithLabelValues(kind).Inc()
	}
}

func (m *Metrics) reservationLost(op string) {
	if m != nil {
		m.lost.WithLabelValues(op).Inc()
	}
}

func (m *Metrics) outcomesDropped(op string, n int) {
	if m != nil {
		m.dropped.WithLabelValues(op).Add(float64(n))
	}
}

func (m *Metrics) jobInterrupted(queue, class, attempt string) {
	if m != nil {
		m.interrupted.WithLabelValues(queue, class, attempt).Inc()
	}
}

// Label values known before the first event, whose series start at 0 so
// an alert on them has a series to read (rate() of an absent series is
// no data, not 0).
var (
	// configKinds are the kinds of the configuration problems Health reports.
	configKinds = configproblem.Kinds
	// writeOps are the completer's writes (lost reservations, retried and
	// dropped writes are counted by op); "extend" refreshes a reservation.
	writeOps = []string{"delete", "finish", "release", "fail", "unreserve"}
	// watchedOutcomes are the outcomes of laraworker_jobs_total that
	// deploy/prometheus-alerts.yml and dashboards divide by one another:
	// done, the releases, and what ends in failed_jobs. Rarer outcomes
	// (batch_cancelled, unrouted...) appear at their first event.
	watchedOutcomes = []string{"done", "released", "released_after_exception", "failed", "max_attempts", "timed_out", "invalid_payload", "undecodable", reasonUnreadableRecord}
)

// watch creates the series a worker can touch at 0, so an alert on them
// has a series to read before the first event: per queue and class (the
// routed ones, and "other") the watched outcomes and interruptions; every
// configuration problem's kind; every write's lost reservations, retried
// and dropped writes.
func (m *Metrics) watch(queues, classes []string) {
	if m == nil {
		return
	}
	classes = append(slices.Clone(classes), "other")
	for _, q := range queues {
		for _, c := range classes {
			for _, attempt := range []string{"restored", "counted"} {
				m.interrupted.WithLabelValues(q, c, attempt)
			}
			for _, o := range watchedOutcomes {
				m.jobs.WithLabelValues(c, q, o)
			}
		}
	}
	for _, k := range configKinds {
		m.config.WithLabelValues(k)
	}
	for _, op := range writeOps {
		m.writeErrors.WithLabelValues(op)
		m.dropped.WithLabelValues(op)
		m.lost.WithLabelValues(op)
	}
	m.lost.WithLabelValues("extend")
}
