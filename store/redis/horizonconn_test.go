package redis

import (
	"context"
	"encoding/json"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/horizon"
	"github.com/laraworker/laraworker/internal/testutil/phptest"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/worker"
	"github.com/rs/zerolog"
)

// clusterNodes are the nodes of database.redis.clusters.<name> as PHP's
// config() returns them, with the cluster's own options.
func clusterNodes(t *testing.T, cl *testredis.Cluster, options map[string]any) map[string]any {
	t.Helper()
	nodes := map[string]any{}
	for i, addr := range cl.Addrs {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		nodes[string(rune('0'+i))] = map[string]any{"host": host, "port": port}
	}
	if options != nil {
		nodes["options"] = options
	}
	return nodes
}

// TestHorizonRecordsOnACluster: with horizon.use naming a cluster and a
// Horizon with Redis Cluster support (Horizon::use() made
// database.redis.clusters.horizon, its prefix in a hash tag), the job
// records and the worker's master and supervisor records are written on
// the cluster, every key in the prefix's slot, and Horizon's reads
// through phpredis's RedisCluster (a MULTI/EXEC, as its
// UsesClusterAwarePipeline runs them there) list the worker and see the
// job completed.
func TestHorizonRecordsOnACluster(t *testing.T) {
	phptest.NeedPHP(t)
	cl := testredis.StartCluster(t)
	cfg := testdb.Config(t, appconfig.EngineSQLite)
	cfg.ConnectionName = "redis"
	const tagged = "{laravel_horizon:}"
	ctx := context.Background()
	st, err := Open(ctx, App{
		Connection: "redis", Version: "13.6", CacheStoreName: cfg.CacheStore, CachePrefix: cfg.CachePrefix, Horizon: true,
		HorizonConfig: map[string]any{"use": "default", "prefix": tagged, "connection_made": "cluster"},
		Queue:         map[string]any{"driver": "redis", "connection": "default", "queue": "default", "retry_after": float64(90)},
		Redis: map[string]any{"client": "phpredis", "options": map[string]any{"prefix": "app_"}, "clusters": map[string]any{
			"default": clusterNodes(t, cl, nil),
			"horizon": clusterNodes(t, cl, map[string]any{"prefix": tagged}),
		}},
	}, OpenOptions{Repository: repository(t, cfg), Horizon: HorizonAuto})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if got := st.Horizon().Config().Prefix; got != tagged {
		t.Fatalf("Horizon's prefix %q, want %q", got, tagged)
	}
	id, err := pushID(ctx, st.Store, jobqueue.PushItem{Payload: built(t, classA)})
	if err != nil {
		t.Fatal(err)
	}
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { return nil })
	wcfg := workerConfig()
	wcfg.Logger = zerolog.Nop()
	w, err := worker.New(st, reg, wcfg)
	if err != nil {
		t.Fatal(err)
	}
	procs, err := st.Horizon().Processes(horizon.ProcessConfig{Basename: "web-1", Environment: "production (laraworker)",
		Supervisor: "supervisor-1", PID: 77, Options: horizon.SupervisorOptions{Balance: "off", Connection: "redis", Queue: "default", MaxProcesses: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if err := procs.Persist(ctx, false); err != nil {
		t.Fatal(err)
	}
	run(t, w, 30*time.Second)
	server := "cluster:" + strings.Join(cl.Addrs, ",")
	got := phpClusterReads(t, server, tagged, id)
	if got.Status != "completed" || len(got.Reads.Supervisors) != 1 || got.Reads.Processes != 4 || got.Reads.Supervisors[0].Name != procs.SupervisorName() {
		t.Errorf("Horizon's reads on the cluster: job %q, supervisors %+v, processes %d", got.Status, got.Reads.Supervisors, got.Reads.Processes)
	}
}

// phpClusterReads are horizon-reads.php's reads and the job's status as
// RedisJobRepository reads it, on a cluster.
type clusterReads struct {
	Status string
	Reads  struct {
		Processes   int
		Supervisors []struct{ Name string }
	}
}

func phpClusterReads(t *testing.T, server, prefix, id string) clusterReads {
	t.Helper()
	reads, err := exec.Command("php", filepath.Join("..", "..", "internal", "horizon", "testdata", "horizon-reads.php"), server, prefix).CombinedOutput()
	if err != nil {
		t.Fatalf("horizon-reads.php: %v\n%s", err, reads)
	}
	script := `$r = new RedisCluster(null, explode(',', $argv[1])); $r->setOption(Redis::OPT_PREFIX, $argv[2]); echo $r->hGet($argv[3], 'status');`
	status, err := exec.Command("php", "-r", script, "--", strings.TrimPrefix(server, "cluster:"), prefix, id).CombinedOutput()
	if err != nil {
		t.Fatalf("the job's status: %v\n%s", err, status)
	}
	out := clusterReads{Status: string(status)}
	if err := json.Unmarshal(reads, &out.Reads); err != nil {
		t.Fatalf("%s: %v", reads, err)
	}
	return out
}

// TestHorizonConnectionAsHorizonUseMadeIt: the Redis connection and
// prefix of Horizon's records are the ones Horizon::use() left in the
// booted app's config; a cluster Horizon reaches only through its first
// node (Horizon before its cluster support, or the config read without
// PHP) is refused with the cause.
func TestHorizonConnectionAsHorizonUseMadeIt(t *testing.T) {
	redis := map[string]any{"client": "phpredis", "options": map[string]any{"prefix": "app_"},
		"default":  map[string]any{"host": "10.0.0.1", "port": "6379"},
		"horizon":  map[string]any{"host": "10.0.0.2", "port": "6380", "options": map[string]any{"prefix": "shop_horizon:"}},
		"clusters": map[string]any{"big": map[string]any{"0": map[string]any{"host": "10.0.0.3", "port": "7000"}}}}
	for _, c := range []struct {
		name            string
		hc              map[string]any
		addr, prefix    string
		wantErrContains string
	}{
		{"booted: database.redis.horizon", map[string]any{"use": "default", "prefix": "shop_horizon:", "connection_made": "standalone"}, "10.0.0.2:6380", "shop_horizon:", ""},
		{"files: horizon.use", map[string]any{"use": "default", "prefix": "shop_horizon:"}, "10.0.0.1:6379", "shop_horizon:", ""},
		{"files: empty prefix", map[string]any{"use": "default"}, "10.0.0.1:6379", "horizon:", ""},
		{"first node of a cluster", map[string]any{"use": "big", "connection_made": "standalone"}, "", "", "first node"},
		{"cluster without a tag", map[string]any{"use": "big", "connection_made": "cluster"}, "", "", "hash tag"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := horizon.FromLaravel(c.hc)
			if err != nil {
				t.Fatal(err)
			}
			r := redis
			if c.hc["connection_made"] == "cluster" {
				r = map[string]any{"client": "phpredis", "clusters": map[string]any{"big": redis["clusters"].(map[string]any)["big"],
					"horizon": map[string]any{"0": map[string]any{"host": "10.0.0.3", "port": "7000"}, "options": map[string]any{"prefix": "horizon:"}}}}
			}
			conn, err := horizonConnection(&cfg, App{Redis: r, HorizonConfig: c.hc, Version: "11.0"})
			if c.wantErrContains != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErrContains) {
					t.Fatalf("error %v, want one saying %q", err, c.wantErrContains)
				}
				return
			}
			if err != nil || conn.Addrs[0] != c.addr || cfg.Prefix != c.prefix {
				t.Errorf("%s %v prefix %q, %v; want %s and %q", conn.Name, conn.Addrs, cfg.Prefix, err, c.addr, c.prefix)
			}
		})
	}
}
