package longwait

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the monitor's Prometheus collectors. A nil *Metrics records
// nothing.
type Metrics struct {
	wait, limit, estimate, alerting *prometheus.GaugeVec
	alerts                          *prometheus.CounterVec
	deliveries                      prometheus.Counter
}

// NewMetrics registers the collectors on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	labels := []string{"connection", "queue"}
	m := &Metrics{
		wait: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "laraworker_long_wait_seconds",
			Help: "How long the oldest ready job of a watched queue has been available, at the last check (0: none ready)."}, labels),
		limit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "laraworker_long_wait_threshold_seconds",
			Help: "The long-wait threshold of a watched queue (Horizon's waits shape)."}, labels),
		estimate: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "laraworker_long_wait_estimate_seconds",
			Help: "Horizon's time-to-clear estimate of a watched queue with Go's workers counted: ready jobs × mean runtime ÷ the live workers' capacity (0: runtime unknown)."}, labels),
		alerting: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "laraworker_long_wait_alert",
			Help: "1 while a watched queue's oldest ready job has waited longer than its threshold."}, labels),
		alerts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "laraworker_long_wait_alerts_total",
			Help: "Long-wait alerts raised: crossings of a queue's threshold (not checks)."}, labels),
		deliveries: prometheus.NewCounter(prometheus.CounterOpts{Name: "laraworker_long_wait_delivery_errors_total",
			Help: "Long-wait alerts or clearances a webhook did not take."}),
	}
	reg.MustRegister(m.wait, m.limit, m.estimate, m.alerting, m.alerts, m.deliveries)
	return m
}

func (m *Metrics) threshold(connection, queue string, d time.Duration) {
	if m == nil {
		return
	}
	m.limit.WithLabelValues(connection, queue).Set(d.Seconds())
	// The series exist from the start, at 0.
	m.alerting.WithLabelValues(connection, queue).Set(0)
	m.alerts.WithLabelValues(connection, queue)
	m.wait.WithLabelValues(connection, queue).Set(0)
}

func (m *Metrics) measured(connection string, ms Measure) {
	if m == nil {
		return
	}
	m.wait.WithLabelValues(connection, ms.Queue).Set(ms.Oldest.Seconds())
	m.estimate.WithLabelValues(connection, ms.Queue).Set(ms.Estimate().Seconds())
}

func (m *Metrics) alert(a Alert) {
	if m == nil {
		return
	}
	if a.Cleared {
		m.alerting.WithLabelValues(a.Connection, a.Queue).Set(0)
		return
	}
	m.alerting.WithLabelValues(a.Connection, a.Queue).Set(1)
	m.alerts.WithLabelValues(a.Connection, a.Queue).Inc()
}

func (m *Metrics) deliveryFailed() {
	if m != nil {
		m.deliveries.Inc()
	}
}
