package redisqueue

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// decode is a config array as config() would print it with json_encode.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return m
}

// skeletonRedis is config/database.php's redis array of the 8.x to 11.x
// skeleton with its env defaults.
const skeletonRedis = `{
	"client": "phpredis",
	"options": {"cluster": "redis", "prefix": "laravel_database_"},
	"default": {"url": null, "host": "127.0.0.1", "password": null, "port": "6379", "database": "0"},
	"cache": {"url": null, "host": "127.0.0.1", "password": null, "port": "6379", "database": "1"}
}`

func TestFromLaravelSkeleton(t *testing.T) {
	queue := decode(t, `{"driver":"redis","connection":"default","queue":"default","retry_after":90,"block_for":null}`)
	c, err := FromLaravel("redis", queue, decode(t, skeletonRedis), LaravelOptions{Version: "8.83.26"})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Connection: "redis", Queue: "default", RetryAfter: 90 * time.Second,
		Redis: RedisConfig{Name: "default", Client: "phpredis", Addrs: []string{"127.0.0.1:6379"}, Prefix: "laravel_database_"},
	}
	if c.String() != want.String() {
		t.Fatalf("got  %s\nwant %s", c, want)
	}
	if k := c.Keys(""); k.Reserved != "laravel_database_queues:default:reserved" {
		t.Fatalf("keys %+v", k)
	}
}

func TestFromLaravelSettings(t *testing.T) {
	redis := decode(t, skeletonRedis)
	cases := []struct {
		name    string
		queue   string
		redis   string // replaces database.redis when set
		opts    LaravelOptions
		check   func(Config) string
		wantErr string
	}{
		{
			name:  "defaults of the connector",
			queue: `{"driver":"redis","queue":"jobs","retry_after":null}`,
			check: func(c Config) string {
				return line(c.RetryAfter, c.BlockFor == nil, c.Redis.Name, c.MigrationBatchSize)
			},
		},
		{
			name:  "block_for and batch size on 9.23+",
			queue: `{"driver":"redis","queue":"q","block_for":5,"migration_batch_size":"100","after_commit":true}`,
			opts:  LaravelOptions{Version: "10.48.0"},
			check: func(c Config) string { return line(*c.BlockFor, c.MigrationBatchSize, c.AfterCommit) },
		},
		{
			name:  "batch size ignored by 8.x and by Horizon",
			queue: `{"driver":"redis","queue":"q","migration_batch_size":100}`,
			opts:  LaravelOptions{Version: "12.0.0", Horizon: true},
			check: func(c Config) string { return line(c.MigrationBatchSize) },
		},
		{
			name:  "retry_after null under Horizon",
			queue: `{"driver":"redis","queue":"q","retry_after":null}`,
			opts:  LaravelOptions{Version: "10.0.0", Horizon: true},
			check: func(c Config) string { return line(c.NeverExpire, c) },
		},
		{
			name:    "batch size 0",
			queue:   `{"driver":"redis","queue":"q","migration_batch_size":0}`,
			opts:    LaravelOptions{Version: "11.0.0"},
			wantErr: "migration_batch_size is 0",
		},
		{
			name:    "not redis",
			queue:   `{"driver":"database","queue":"q"}`,
			wantErr: `queue.connections.redis.driver is "database"`,
		},
		{
			name:    "no queue",
			queue:   `{"driver":"redis"}`,
			wantErr: "queue.connections.redis.queue is not set",
		},
		{
			name:    "unknown redis connection",
			queue:   `{"driver":"redis","queue":"q","connection":"queues"}`,
			wantErr: "Redis connection [queues] not configured",
		},
		{
			name:  "url with tls, user, password and database",
			queue: `{"driver":"redis","queue":"q"}`,
			redis: `{"options":{"prefix":"p_"},"default":{"url":"rediss://worker:s3cr%2Ft@cache.example:6380/3","host":"ignored"}}`,
			opts:  LaravelOptions{Version: "10.0.0"},
			check: func(c Config) string {
				r := c.Redis
				return line(r.Addrs, r.TLS, r.Username, r.Password.Reveal(), r.DB, r.Prefix)
			},
		},
		{
			name:  "phpredis on 8.x sends no username",
			queue: `{"driver":"redis","queue":"q"}`,
			redis: `{"default":{"host":"h","username":"u","password":"pw"}}`,
			check: func(c Config) string { return fmt.Sprintf("%q", c.Redis.Username) },
		},
		{
			name:  "tls host and context",
			queue: `{"driver":"redis","queue":"q"}`,
			redis: `{"default":{"host":"tls://h","port":6379,"options":{"context":{"stream":{"verify_peer":false,"cafile":"/ca.pem"}}}}}`,
			check: func(c Config) string {
				return line(c.Redis.Addrs, c.Redis.TLS, c.Redis.TLSSkipVerify, c.Redis.TLSCAFile)
			},
		},
		{
			name:  "a connection-level prefix loses to options on phpredis 8.x",
			queue: `{"driver":"redis","queue":"q"}`,
			redis: `{"options":{"prefix":"global_"},"default":{"host":"h","prefix":"own_"}}`,
			check: func(c Config) string { return c.Redis.Prefix },
		},
		{
			name:  "and wins from 9.12",
			queue: `{"driver":"redis","queue":"q"}`,
			redis: `{"options":{"prefix":"global_"},"default":{"host":"h","prefix":"own_"}}`,
			opts:  LaravelOptions{Version: "9.12.0"},
			check: func(c Config) string { return c.Redis.Prefix },
		},
		{
			name:  "connection options win over global ones",
			queue: `{"driver":"redis","queue":"q"}`,
			redis: `{"options":{"prefix":"global_"},"default":{"host":"h","options":{"prefix":"conn_"}}}`,
			check: func(c Config) string { return c.Redis.Prefix },
		},
		{
			name:    "serializer",
			queue:   `{"driver":"redis","queue":"q"}`,
			redis:   `{"options":{"serializer":1},"default":{"host":"h"}}`,
			wantErr: "options.serializer is set",
		},
		{
			name:  "cluster",
			queue: `{"driver":"redis","queue":"{default}","connection":"clustered"}`,
			redis: `{"options":{"prefix":"p_"},"clusters":{"options":{"prefix":"c_","password":"cpw"},"clustered":[{"host":"10.0.0.1","port":7000},{"host":"10.0.0.2","port":7001}]}}`,
			opts:  LaravelOptions{Version: "13.5.0"},
			check: func(c Config) string {
				return line(c.Redis.Cluster, c.Redis.Addrs, c.Redis.Prefix, c.Redis.Password.Reveal(), c.HashTagQueues, c.Keys("").Ready, c.Keys("mail").Ready)
			},
		},
		{
			name:    "predis client-side sharding",
			queue:   `{"driver":"redis","queue":"q","connection":"clustered"}`,
			redis:   `{"client":"predis","options":{"cluster":"predis"},"clusters":{"clustered":[{"host":"a"}]}}`,
			wantErr: "client-side sharding",
		},
		{
			name:    "bad port",
			queue:   `{"driver":"redis","queue":"q"}`,
			redis:   `{"default":{"host":"h","port":"http"}}`,
			wantErr: `port "http" is not a port number`,
		},
		{
			name:    "malformed url does not echo it",
			queue:   `{"driver":"redis","queue":"q"}`,
			redis:   `{"default":{"url":"redis://user:hunter2@[::1"}}`,
			wantErr: "url is malformed",
		},
	}
	want := map[string]string{
		"retry_after null under Horizon":                             "true redisqueue.Config{Connection:redis Queue:q RetryAfter:null BlockFor:null AfterCommit:false MigrationBatchSize:0 HashTagQueues:false Redis:redisqueue.RedisConfig{Name:default Client:phpredis Addrs:[127.0.0.1:6379] Cluster:false Username: Password: DB:0 Prefix:\"laravel_database_\" TLS:false TLSSkipVerify:false}}",
		"defaults of the connector":                                  "1m0s true default 0",
		"block_for and batch size on 9.23+":                          "5s 100 true",
		"batch size ignored by 8.x and by Horizon":                   "0",
		"url with tls, user, password and database":                  "[cache.example:6380] true worker s3cr/t 3 p_",
		"phpredis on 8.x sends no username":                          `""`,
		"tls host and context":                                       "[h:6379] true true /ca.pem",
		"a connection-level prefix loses to options on phpredis 8.x": "global_",
		"and wins from 9.12":                                         "own_",
		"connection options win over global ones":                    "conn_",
		"cluster": "true [10.0.0.1:7000 10.0.0.2:7001] c_ cpw true c_queues:{default} c_queues:{mail}",
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := redis
			if tc.redis != "" {
				r = decode(t, tc.redis)
			}
			if tc.opts.Version == "" {
				tc.opts.Version = "8.83.26"
			}
			c, err := FromLaravel("redis", decode(t, tc.queue), r, tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Fatal("the error shows the password")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.check(c); got != want[tc.name] {
				t.Fatalf("got %s, want %s", got, want[tc.name])
			}
		})
	}
}

func TestFromLaravelNeedsTheVersion(t *testing.T) {
	_, err := FromLaravel("redis", decode(t, `{"driver":"redis","queue":"q"}`), decode(t, skeletonRedis), LaravelOptions{})
	if err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatal(err)
	}
}

// TestSecretsNeverPrint: every way of printing a config redacts the
// password.
func TestSecretsNeverPrint(t *testing.T) {
	c := Config{Queue: "q", Redis: RedisConfig{Addrs: []string{"h:1"}, Password: "hunter2"}}
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		if s := fmt.Sprintf(format, c); strings.Contains(s, "hunter2") || strings.Contains(s, fmt.Sprintf("%x", "hunter2")) {
			t.Errorf("%s printed the password: %s", format, s)
		}
		if s := fmt.Sprintf(format, c.Redis.Password); strings.Contains(s, "hunter2") {
			t.Errorf("%s of the secret printed it: %s", format, s)
		}
	}
	b, _ := json.Marshal(c)
	if strings.Contains(string(b), "hunter2") {
		t.Errorf("JSON has the password: %s", b)
	}
	if c.Redis.Password.Reveal() != "hunter2" {
		t.Error("Reveal lost the password")
	}
}

func TestHashTagsAndSlots(t *testing.T) {
	for key, want := range map[string]bool{"{a}": true, "x{a}y": true, "{}": false, "}{": false, "a": false, "{a": false, "{}a}": false} {
		if HasHashTag(key) != want {
			t.Errorf("HasHashTag(%q) = %t", key, !want)
		}
	}
	// Values from the Redis Cluster specification and CLUSTER KEYSLOT.
	for key, want := range map[string]int{"123456789": 12739, "foo": 12182, "{user1000}.following": Slot("user1000"), "foo{}{bar}": Slot("foo{}{bar}")} {
		if got := Slot(key); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
	if crc16("123456789") != 0x31C3 {
		t.Errorf("crc16 check value %#x", crc16("123456789"))
	}
}

func TestPreparePayload(t *testing.T) {
	cases := map[string]string{
		`{"uuid":"u","data":{"a":1}}`:               `{"uuid":"u","data":{"a":1},"id":"ID","attempts":0}`,
		`{"uuid":"u","createdAt":1,"delay":null}`:   `{"uuid":"u","createdAt":1,"id":"ID","attempts":0,"delay":null}`,
		`{"uuid":"u","data":{"delay":1},"delay":5}`: `{"uuid":"u","data":{"delay":1},"id":"ID","attempts":0,"delay":5}`,
		`{}`:                                    `{"id":"ID","attempts":0}`,
		`{"delay":null}`:                        `{"id":"ID","attempts":0,"delay":null}`,
		`{"uuid":"u","id":"keep","attempts":2}`: `{"uuid":"u","id":"keep","attempts":2}`,
		`{"delay":1,"uuid":"u"}`:                `{"delay":1,"uuid":"u","id":"ID","attempts":0}`,
	}
	for in, want := range cases {
		out, id, err := PreparePayload([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		got := string(out)
		if id != "keep" {
			got = strings.Replace(got, id, "ID", 1)
		}
		if got != want {
			t.Errorf("%s:\n got  %s\n want %s", in, got, want)
		}
		if id != "keep" && (len(id) != 32 || strings.Trim(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") != "") {
			t.Errorf("id %q is not Str::random(32)", id)
		}
		if err := checkPayload(out); err != nil {
			t.Errorf("%s: %v", out, err)
		}
	}
	for _, bad := range []string{`[]`, `{"id":"x"}`, `{"attempts":0}`, `{"a":1} x`, `nope`} {
		if _, _, err := PreparePayload([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// line prints values separated by spaces.
func line(v ...any) string { return strings.TrimSuffix(fmt.Sprintln(v...), "\n") }
