package redisproto

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/redis/go-redis/v9"
)

// sentinelSetup is a master, its replica and one sentinel watching them
// (quorum 1: it fails over alone), all private to the test.
type sentinelSetup struct {
	master, replica, sentinel *testredis.Server
	// mc and rc are clients of the master and the replica (database db).
	mc, rc  *redis.Client
	service string
}

// startSentinelSetup starts the three servers, TLS when pki is given
// (the sentinel's own port plain when plainSentinel), with the master and
// replica requiring masterPW and the sentinel sentinelPW when set, and
// waits until the replica is in sync.
func startSentinelSetup(t *testing.T, pki *testredis.PKI, plainSentinel bool, masterPW, sentinelPW string, db int) *sentinelSetup {
	t.Helper()
	var auth []string
	if masterPW != "" {
		auth = []string{"--requirepass", masterPW, "--masterauth", masterPW}
	}
	s := &sentinelSetup{service: "lwmaster"}
	if pki != nil {
		s.master = testredis.StartTLS(t, pki, auth...)
	} else {
		s.master = testredis.Start(t, auth...)
	}
	s.replica = testredis.StartReplica(t, s.master, pki, auth...)
	client := func(addr string) *redis.Client {
		o := &redis.Options{Addr: addr, Password: masterPW, DB: db, Protocol: 2, DisableIdentity: true, MaxRetries: -1}
		if pki != nil {
			o.TLSConfig = pki.ClientTLS(t)
		}
		c := redis.NewClient(o)
		t.Cleanup(func() { c.Close() })
		return c
	}
	s.mc, s.rc = client(s.master.Addr), client(s.replica.Addr)
	waitUntil(t, 20*time.Second, "the replica in sync with the master", func() bool {
		info, err := s.rc.Info(context.Background(), "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	})
	s.sentinel = testredis.StartSentinel(t, s.service, s.master, testredis.SentinelOptions{PKI: pki, PlainPort: plainSentinel, Password: sentinelPW, MasterPassword: masterPW})
	return s
}

// failover kills the master, as a crash would, once the replica has
// every write, and waits until the sentinel has promoted the replica.
func (s *sentinelSetup) failover(t *testing.T) {
	t.Helper()
	ctx := ctxT(t)
	if n, err := s.mc.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT for the replica: %d %v", n, err)
	}
	s.master.Kill()
	testredis.WaitMaster(t, s.sentinel, s.service, s.replica.Addr, 60*time.Second)
}

// sentinelRedisConfig is config('database.redis') of an app on predis
// whose "default" connection goes through the sentinel as Laravel's
// PredisConnector takes it: the sentinels as the connection's list, the
// master's password and database in options.parameters.
func sentinelRedisConfig(t *testing.T, prefix string, sentinels []any, own map[string]any) map[string]any {
	t.Helper()
	conn := map[string]any{"options": own}
	for i, s := range sentinels {
		conn[fmt.Sprint(i)] = s
	}
	b, err := json.Marshal(map[string]any{
		"client":  "predis",
		"options": map[string]any{"cluster": "redis", "prefix": prefix},
		"default": conn,
	})
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, string(b))
}

// TestSentinelConnectionFollowsFailover: a predis connection through
// Redis Sentinel (options.replication "sentinel", the sentinel's own
// password in its URI, the master's password and database in
// options.parameters) is read as one and Go finds the queue PHP filled on
// the master the sentinel names (the reader used to fall back to
// 127.0.0.1:6379 there and saw an empty queue); when the master dies and
// the sentinel promotes the replica, the same Queue pops, deletes and
// pushes on the new master.
func TestSentinelConnectionFollowsFailover(t *testing.T) {
	s := startSentinelSetup(t, nil, false, "master-pw", "sentinel-pw", 3)
	prefix := fmt.Sprintf("lw_sentinel_%d_", time.Now().UnixNano())
	redisConf := sentinelRedisConfig(t, prefix, []any{"tcp://" + s.sentinel.Addr + "?password=sentinel-pw&timeout=0.5"}, map[string]any{
		"replication": "sentinel", "service": s.service,
		"parameters": map[string]any{"password": "master-pw", "database": 3},
	})
	cfg, err := FromLaravel("redis", decode(t, `{"driver":"redis","queue":"default"}`), redisConf, LaravelOptions{Version: "10.48.0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	// Two jobs PHP pushed through the sentinel are on the master.
	key := prefix + "queues:default"
	for i := range 2 {
		if err := s.mc.RPush(ctx, key, payloadFor(fmt.Sprintf("u-%d", i), fmt.Sprintf("id-%d", i), 0, "")).Err(); err != nil {
			t.Fatal(err)
		}
	}
	q := openQueue(t, cfg, nil)
	if n, err := q.Size(ctx, ""); err != nil || n != 2 {
		t.Fatalf("Go sees %d jobs (%v) on the sentinel's master, want the 2 PHP pushed (config read as %s)", n, err, cfg.Redis)
	}
	if s := cfg.Redis.String(); strings.Contains(s, "master-pw") || strings.Contains(s, "sentinel-pw") {
		t.Fatalf("the config prints a password: %s", s)
	}
	j := mustPop(t, q, "")
	if lost, err := q.Delete(ctx, j); err != nil || len(lost) != 0 {
		t.Fatalf("delete: %v %v", lost, err)
	}
	if _, err := q.Push(ctx, "", payloadFor("u-2", "id-2", 0, "")); err != nil {
		t.Fatal(err)
	}

	killed := time.Now()
	s.failover(t)
	promoted := time.Since(killed)
	// Go follows: its next commands go to the promoted replica. The first
	// ones may fail while the dead master's connections are dropped.
	waitUntil(t, 30*time.Second, "Go's queue on the new master", func() bool {
		n, err := q.Size(ctx, "")
		return err == nil && n == 2
	})
	t.Logf("the sentinel promoted the replica %s after the master's death; Go answered from it %s after", promoted.Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
	j = mustPop(t, q, "")
	if j.UUID != "u-1" {
		t.Fatalf("popped %s after the failover, want u-1 (the jobs kept their order)", j.UUID)
	}
	if lost, err := q.Delete(ctx, j); err != nil || len(lost) != 0 {
		t.Fatalf("delete on the new master: %v %v", lost, err)
	}
	if _, err := q.Push(ctx, "", payloadFor("u-3", "id-3", 0, "")); err != nil {
		t.Fatal(err)
	}
	list, err := s.rc.LRange(ctx, key, 0, -1).Result()
	if err != nil || len(list) != 2 || !strings.Contains(list[0], `"u-2"`) || !strings.Contains(list[1], `"u-3"`) {
		t.Fatalf("the new master's list: %q %v", list, err)
	}
}

// TestSentinelOverTLS: sentinels and master over TLS with client
// certificates, the TLS settings given once in options.parameters
// (predis fills the sentinels' missing parameters from them too), across
// a failover; and a sentinel on plain TCP (its URI says tcp://) in front
// of a TLS master, each dialed with its own settings.
func TestSentinelOverTLS(t *testing.T) {
	pki := testredis.NewPKI(t)
	ssl := map[string]any{"cafile": pki.CA, "local_cert": pki.ClientCert, "local_pk": pki.ClientKey, "verify_peer": true}
	t.Run("all TLS", func(t *testing.T) {
		s := startSentinelSetup(t, pki, false, "", "", 0)
		prefix := fmt.Sprintf("lw_sentinel_tls_%d_", time.Now().UnixNano())
		redisConf := sentinelRedisConfig(t, prefix, []any{map[string]any{"host": "127.0.0.1", "port": s.sentinel.Port}}, map[string]any{
			"replication": "sentinel", "service": s.service,
			"parameters": map[string]any{"scheme": "tls", "ssl": ssl},
		})
		cfg, err := FromLaravel("redis", decode(t, `{"driver":"redis","queue":"default"}`), redisConf, LaravelOptions{Version: "8.83.26"})
		if err != nil {
			t.Fatal(err)
		}
		q := openQueue(t, cfg, nil)
		ctx := ctxT(t)
		if _, err := q.Push(ctx, "", payloadFor("u-1", "id-1", 0, "")); err != nil {
			t.Fatal(err)
		}
		s.failover(t)
		waitUntil(t, 30*time.Second, "Go's queue on the new master", func() bool {
			n, err := q.Size(ctx, "")
			return err == nil && n == 1
		})
		if j := mustPop(t, q, ""); j.UUID != "u-1" {
			t.Fatalf("popped %s", j.UUID)
		}
	})
	t.Run("plain sentinel, TLS master", func(t *testing.T) {
		s := startSentinelSetup(t, pki, true, "", "", 0)
		prefix := fmt.Sprintf("lw_sentinel_mixed_%d_", time.Now().UnixNano())
		redisConf := sentinelRedisConfig(t, prefix, []any{"tcp://" + s.sentinel.Addr}, map[string]any{
			"replication": "sentinel", "service": s.service,
			"parameters": map[string]any{"scheme": "tls", "ssl": ssl},
		})
		cfg, err := FromLaravel("redis", decode(t, `{"driver":"redis","queue":"default"}`), redisConf, LaravelOptions{Version: "8.83.26"})
		if err != nil {
			t.Fatal(err)
		}
		q := openQueue(t, cfg, nil)
		ctx := ctxT(t)
		if _, err := q.Push(ctx, "", payloadFor("u-1", "id-1", 0, "")); err != nil {
			t.Fatal(err)
		}
		if n, err := s.mc.LLen(ctx, prefix+"queues:default").Result(); err != nil || n != 1 {
			t.Fatalf("the TLS master holds %d jobs (%v)", n, err)
		}
	})
}
