package horizon

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// metricsScript is Horizon's LuaScripts::updateMetrics for the runtimes
// in ARGV, in order, as if run once for each: the throughput counted and
// the runtime's running average ((throughput * runtime + new) /
// (throughput + 1)), the hash named in its measured set. It reads the
// hash once and writes it once: between two of Horizon's runs the numbers
// go through the hash as text, which Redis writes with a double's
// shortest exact form (%.17g before 7.0), so reading them back gives the
// same double, and keeping them in Lua gives the bytes n runs leave
// (TestMetricsOfABatchEqualOneRunPerJob). The measured set's member is
// KEYS[1] as the script sees it: the prefixed key, as phpredis passes it
// (RedisMetricsRepository strips the prefix when reading).
//
// KEYS: 1 the job:<class> or queue:<name> hash, 2 measured_jobs or
// measured_queues. ARGV: runtimes in milliseconds.
var metricsScript = redis.NewScript(`
redis.call('hsetnx', KEYS[1], 'throughput', 0)
redis.call('sadd', KEYS[2], KEYS[1])
local hash = redis.call('hmget', KEYS[1], 'throughput', 'runtime')
local throughput, runtime = hash[1], hash[2]
for i = 1, #ARGV do
  local next = throughput + 1
  if runtime then
    runtime = ((throughput * tonumber(runtime)) + tonumber(ARGV[i])) / next
  else
    runtime = tonumber(ARGV[i])
  end
  throughput = next
end
redis.call('hmset', KEYS[1], 'throughput', throughput, 'runtime', runtime)
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
