package e2e

import "testing"

// TestRedisClusterPHPAndGo runs the core scenarios of the single-server
// Redis tests on a local three-master Redis Cluster, with the Laravel 8.83
// app configured for it as Laravel's docs configure one (phpredis,
// database.redis.clusters, options.cluster "redis") and its queues
// hash-tagged ({default}, {high}): PHP and Go drain one queue, every job
// once; a job Go fails is listed by queue:failed and retried by
// queue:retry; delayed and released jobs; a chain crossing
// PHP and Go (Laravel 8.83 cannot dispatch a batch onto a phpredis
// cluster: RedisQueue::bulk calls pipeline(), which RedisCluster lacks).
// Each scenario gets a cluster of its own.
func TestRedisClusterPHPAndGo(t *testing.T) {
	onEachDB(t, func(t *testing.T, s *suite) {
		t.Run("drain", func(t *testing.T) { s.reset(t); redisPHPAndGoDrainOneQueue(t, s.redisClusterQueue(t), 300) })
		t.Run("failed-retry", func(t *testing.T) { s.reset(t); redisGoFailsPHPRetries(t, s.redisClusterQueue(t)) })
		t.Run("delayed-released", func(t *testing.T) { s.reset(t); redisDelayedAndReleased(t, s.redisClusterQueue(t)) })
		t.Run("chain", func(t *testing.T) { s.reset(t); redisChainAndBatchCrossPHPAndGo(t, s.redisClusterQueue(t)) })
	})
}
