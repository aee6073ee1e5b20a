package redis_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/redisproto"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/jobqueue/storetest"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
	"github.com/laraworker/laraworker/store/redis"
	"github.com/rs/zerolog"
)

// redisUnsupported are what Laravel's Redis queue cannot do: a Redis
// job has no number to look it up by, nor an index of its uuids.
var redisUnsupported = []storetest.Op{storetest.OpFindJob, storetest.OpFindJobByUUID}

// TestConformance runs the store contract's suite on one redis-server,
// each test under a key prefix of its own, with its failed jobs and
// batches in tables of its own on each database engine.
func TestConformance(t *testing.T) {
	srv := testredis.Start(t)
	testdb.ForEachEngine(t, func(t *testing.T, engine string) {
		storetest.Run(t, storetest.Config{Unsupported: redisUnsupported, Open: func(t *testing.T) storetest.Opened {
			return openRedis(t, engine, redisproto.RedisConfig{Addrs: []string{srv.Addr}}, "default")
		}})
	})
}

// TestConformanceOnACluster runs the suite on a three-master Redis
// Cluster, its queues under one hash tag as Laravel documents for a
// cluster (so that a move reaches both queues).
func TestConformanceOnACluster(t *testing.T) {
	cl := testredis.StartCluster(t)
	tagged := func(q string) string { return "{jobs}" + q }
	storetest.Run(t, storetest.Config{Unsupported: redisUnsupported, QueueName: tagged, Open: func(t *testing.T) storetest.Opened {
		return openRedis(t, appconfig.EngineSQLite, redisproto.RedisConfig{Addrs: cl.Addrs, Cluster: true}, tagged("default"))
	}})
}

// prefixes numbers the tests' key prefixes.
var prefixes atomic.Int64

// openRedis opens a store on the redis connection rc under a fresh
// prefix, with its database side on engine, on a fake clock the two
// share.
func openRedis(t *testing.T, engine string, rc redisproto.RedisConfig, defaultQueue string) storetest.Opened {
	clock := storetest.NewClock()
	cfg := testdb.Config(t, engine)
	cfg.ConnectionName = "redis"
	db := testdb.OpenWith(t, cfg, database.Options{Clock: clock.Now})
	rc.Name, rc.Client = "default", "phpredis"
	rc.Prefix = fmt.Sprintf("storetest%d_%s:", prefixes.Add(1), t.Name())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := redisproto.Open(ctx, redisproto.Config{Connection: "redis", Queue: defaultQueue, RetryAfter: 90 * time.Second, Redis: rc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	q.SetClock(clock.Now)
	s, err := redis.New(q, db, redis.Options{Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	return storetest.Opened{Store: s, Clock: clock, NewBatch: func(t *testing.T, id string, total int) {
		testdb.InsertBatch(t, db, id, total, []byte("a:0:{}"))
	}}
}
