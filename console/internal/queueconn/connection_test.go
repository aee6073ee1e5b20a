package queueconn

import (
	"context"
	"errors"
	"github.com/laraworker/laraworker/jobqueue"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testbeanstalkd"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// TestOpenConnectionByDriver: the served queue connection's driver picks
// the store. A database connection (or an unknown driver, as before) gets
// the database store and its tables; a redis one whose config was not
// read is refused by name, instead of serving the jobs table PHP does not
// push to, and one whose config was read gets the Redis store, its queue,
// and failed_jobs in the app's database.
func TestOpenConnectionByDriver(t *testing.T) {
	cfg := appconfig.Config{Driver: appconfig.EngineSQLite, Database: filepath.Join(t.TempDir(), "q.sqlite")}.WithDefaults()
	ctx := context.Background()
	for _, info := range []appconfig.AppInfo{{}, {Connection: "database", QueueDriver: "database"}, {Connection: "jobs", QueueConnections: map[string]string{"jobs": "database"}}} {
		conn, err := Open(ctx, cfg, info, Options{})
		if err != nil {
			t.Fatalf("%+v: %v", info, err)
		}
		if conn.Driver != DriverDatabase || conn.Store == nil || conn.sql == nil || conn.Redis != nil {
			t.Errorf("%+v: driver %s, connection %+v", info, conn.Driver, conn)
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
	if conn.Driver != DriverRedis || conn.Store == nil || conn.sql == nil {
		t.Errorf("redis: driver %s, connection %+v", conn.Driver, conn)
	}
	if err := conn.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
	if _, err := conn.Database("the dashboard"); err != nil || conn.sql.JobsTable != "" || conn.Redis == nil {
		t.Errorf("the redis connection's database: %v, jobs table %q, redis queue %v", err, conn.sql.JobsTable, conn.Redis)
	}
}

// TestOpenBeanstalkdConnection: a beanstalkd queue connection opens the
// beanstalkd store with its failed jobs in the app's database; one whose
// configuration was not read, or says what Laravel could not connect
// with, is refused naming why.
func TestOpenBeanstalkdConnection(t *testing.T) {
	cfg := appconfig.Config{Driver: appconfig.EngineSQLite, Database: filepath.Join(t.TempDir(), "q.sqlite")}.WithDefaults()
	ctx := context.Background()
	info := appconfig.AppInfo{Connection: "beanstalkd", ConnectionFrom: "queue.default",
		QueueConnections: map[string]string{"beanstalkd": "beanstalkd", "database": "database"}}
	if _, err := Open(ctx, cfg, info, Options{}); err == nil || !strings.Contains(err.Error(), `queue connection "beanstalkd" has driver beanstalkd, but its configuration was not read`) {
		t.Fatalf("without its config: %v", err)
	}
	info.BeanstalkdQueue = map[string]any{"driver": "beanstalkd", "queue": "default"}
	if _, err := Open(ctx, cfg, info, Options{}); err == nil || !strings.Contains(err.Error(), "no host") {
		t.Fatalf("without a host: %v", err)
	}
	srv := testbeanstalkd.Start(t)
	info.BeanstalkdQueue = map[string]any{"driver": "beanstalkd", "host": "127.0.0.1", "port": float64(srv.Port), "queue": "default", "retry_after": 90.0}
	conn, err := Open(ctx, cfg, info, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if conn.Driver != DriverBeanstalkd || conn.Store == nil || conn.sql == nil || conn.sql.JobsTable != "" {
		t.Errorf("beanstalkd: driver %s, connection %+v", conn.Driver, conn)
	}
	if _, _, err := conn.Store.ClassesOnQueues(ctx, []string{"default"}, 10); !errors.Is(err, jobqueue.ErrNotSupported) {
		t.Errorf("beanstalkd lists no classes without reserving: %v, want ErrNotSupported", err)
	}
	if err := conn.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
	if conn.Store.Connection() != "beanstalkd" || conn.Store.RetryAfter() != 90*time.Second {
		t.Errorf("store %s %s", conn.Store.Connection(), conn.Store.RetryAfter())
	}
}
