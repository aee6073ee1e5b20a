package worker

import (
	"github.com/prometheus/client_golang/prometheus"
)

// QueueMetrics are the gauges of the queue tables and the fleet, as a
// dashboard's snapshot sees them (`laraworker dashboard --metrics-addr`,
// or `work --metrics-addr` with `--dashboard-addr`): they come from its
// incremental caches, never from a scan of the whole jobs table.
type QueueMetrics struct {
	// OldestReady is, per queue, how long the longest-waiting ready job
	// has been available: the queue wait.
	OldestReady *prometheus.GaugeVec
	// Failed counts failed_jobs rows per queue.
	Failed *prometheus.GaugeVec
	// Workers counts worker processes by kind (go, php) whose heartbeat
	// is recent.
	Workers *prometheus.GaugeVec
	// LastSeen is the unix time of the most recent heartbeat of any
	// worker (0: none in the table).
	LastSeen prometheus.Gauge
	// Depth is laraworker_queue_depth: NewQueueMetrics registers it when
	// the process has no worker Metrics (a dashboard alone); with them,
	// set it to Metrics.Depth.
	Depth *prometheus.GaugeVec
}

// NewQueueMetrics registers the gauges on reg. depth is the worker's
// laraworker_queue_depth when this process runs a worker with metrics,
// else nil (it is then created and registered here).
func NewQueueMetrics(reg prometheus.Registerer, depth *prometheus.GaugeVec) *QueueMetrics {
	m := &QueueMetrics{
		OldestReady: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "laraworker_queue_oldest_ready_seconds", Help: "Age of the longest-waiting ready job, by queue (0: none ready).",
		}, []string{"queue"}),
		Failed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "laraworker_failed_jobs", Help: "Rows of failed_jobs, by queue.",
		}, []string{"queue"}),
		Workers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "laraworker_fleet_workers", Help: "Worker processes with a recent heartbeat, by kind (go, php).",
		}, []string{"kind"}),
		LastSeen: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "laraworker_fleet_last_seen_timestamp_seconds", Help: "Unix time of the most recent heartbeat of any worker (0: none).",
		}),
		Depth: depth,
	}
	cs := []prometheus.Collector{m.OldestReady, m.Failed, m.Workers, m.LastSeen}
	if m.Depth == nil {
		m.Depth = prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "laraworker_queue_depth", Help: "Jobs in the table by queue and state.",
		}, []string{"queue", "state"})
		cs = append(cs, m.Depth)
	}
	reg.MustRegister(cs...)
	return m
}
