package redishorizon

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// metricsScript is Horizon's LuaScripts::updateMetrics run once per
// runtime in ARGV, in order: each pass does what one run of Horizon's
// script does (the throughput counted, the runtime's running average,
// the hash named in its measured set), reading back what the previous
// pass wrote, so n passes leave the bytes n runs leave. The measured
// set's member is KEYS[1] as the script sees it: the prefixed key, as
// phpredis passes it (RedisMetricsRepository strips it when reading).
//
// KEYS: 1 the job:<class> or queue:<name> hash, 2 measured_jobs or
// measured_queues. ARGV: runtimes in milliseconds.
var metricsScript = redis.NewScript(`
for i = 1, #ARGV do
  redis.call('hsetnx', KEYS[1], 'throughput', 0)
  redis.call('sadd', KEYS[2], KEYS[1])
  local hash = redis.call('hmget', KEYS[1], 'throughput', 'runtime')
  local throughput = hash[1] + 1
  local runtime = 0
  if hash[2] then
    runtime = ((hash[1] * tonumber(hash[2])) + tonumber(ARGV[i])) / throughput
  else
    runtime = tonumber(ARGV[i])
  end
  redis.call('hmset', KEYS[1], 'throughput', throughput, 'runtime', runtime)
end
`)

// runs are the runtimes of a batch's jobs by metrics key, in job order.
type runs struct {
	keys []string
	ms   map[string][]any
}

func (rs *runs) add(key string, ms float64) {
	if rs.ms == nil {
		rs.ms = map[string][]any{}
	}
	if _, ok := rs.ms[key]; !ok {
		rs.keys = append(rs.keys, key)
	}
	// (string) $runtime, as RedisMetricsRepository sends it.
	rs.ms[key] = append(rs.ms[key], phpFloat(ms))
}

// send queues one script run per key; the script is loaded first by
// EvalSha's fallback in Run, so it goes as EVAL in a pipeline.
func (rs *runs) send(ctx context.Context, p redis.Pipeliner, r *Recorder, measured string) {
	for _, k := range rs.keys {
		metricsScript.Eval(ctx, p, []string{r.key(k), r.key(measured)}, rs.ms[k]...)
	}
}
