package queueconn

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/internal/testredis"
)

// TestOpenConnectionByDriver: the served queue connection's driver picks
// the store. A database connection (or an unknown driver, as before) gets
// the database store with every capability the CLI uses; a redis one is
// refused by name until a Redis store exists, instead of serving the jobs
// table PHP does not push to.
func TestOpenConnectionByDriver(t *testing.T) {
	cfg := appconfig.Config{Driver: appconfig.EngineSQLite, Database: filepath.Join(t.TempDir(), "q.sqlite")}.WithDefaults()
	ctx := context.Background()
	for _, info := range []appconfig.AppInfo{{}, {Connection: "database", QueueDriver: "database"}, {Connection: "jobs", QueueConnections: map[string]string{"jobs": "database"}}} {
		conn, err := Open(ctx, cfg, info, Options{})
		if err != nil {
			t.Fatalf("%+v: %v", info, err)
		}
		if conn.Driver != DriverDatabase || conn.Admin == nil || conn.Failed == nil || conn.Schema == nil || conn.Classes == nil || conn.sql == nil {
			t.Errorf("%+v: driver %s, capabilities %+v", info, conn.Driver, conn)
		}
		if err := conn.Ping(ctx); err != nil {
			t.Errorf("ping: %v", err)
		}
		conn.Close()
	}
	info := appconfig.AppInfo{Connection: "redis", ConnectionFrom: "queue.default",
		QueueConnections: map[string]string{"redis": "redis", "database": "database"}}
	_, err := Open(ctx, cfg, info, Options{})
	if err == nil || !strings.Contains(err.Error(), `queue connection "redis" has driver redis, but its configuration was not read`) {
		t.Fatalf("redis connection without its config: %v", err)
	}
	srv := testredis.Start(t)
	host, port, _ := net.SplitHostPort(srv.Addr)
	info.RedisQueue = &appconfig.RedisQueueConfig{
		Queue: map[string]any{"driver": "redis", "connection": "default", "queue": "default", "retry_after": 90.0},
		Redis: appconfig.RedisArrays{"client": "phpredis", "default": map[string]any{"host": host, "port": port}},
	}
	info.Version = "8.83.27"
	conn, err := Open(ctx, cfg, info, Options{})
	if err != nil {
		t.Fatalf("redis connection: %v", err)
	}
	defer conn.Close()
	if conn.Driver != DriverRedis || conn.Admin == nil || conn.Failed == nil || conn.sql == nil || conn.Classes == nil {
		t.Errorf("redis: driver %s, capabilities %+v", conn.Driver, conn)
	}
	if err := conn.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
	if _, err := conn.Database("the dashboard"); err != nil || conn.sql.Tables.Jobs != "" {
		t.Errorf("the redis connection's database: %v, tables %+v", err, conn.sql.Tables)
	}
}
