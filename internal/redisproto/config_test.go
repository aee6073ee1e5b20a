package redisproto

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
			name:  "after_commit an empty array, false as PHP casts it",
			queue: `{"driver":"redis","queue":"q","after_commit":[]}`,
			check: func(c Config) string { return line(c.AfterCommit) },
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
				return line(c.Redis.Addrs, c.Redis.TLS, c.Redis.TLSOptions.NoVerifyPeer, c.Redis.TLSOptions.CAFile)
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
		"retry_after null under Horizon":                             "true redisqueue.Config{Connection:redis Queue:q RetryAfter:null BlockFor:null AfterCommit:false MigrationBatchSize:0 HashTagQueues:false Redis:redisqueue.RedisConfig{Name:default Client:phpredis Addrs:[127.0.0.1:6379] Cluster:false Username: Password: DB:0 Prefix:\"laravel_database_\" TLS:false}}",
		"defaults of the connector":                                  "1m0s true default 0",
		"block_for and batch size on 9.23+":                          "5s 100 true",
		"after_commit an empty array, false as PHP casts it":         "false",
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

// sentinelSummary prints a Sentinel connection's settings, passwords
// revealed.
func sentinelSummary(r RedisConfig) string {
	s := r.Sentinel
	if s == nil {
		return "not sentinel: " + r.String()
	}
	var tls []string
	for _, o := range s.TLS {
		if o == nil {
			tls = append(tls, "plain")
		} else {
			tls = append(tls, "tls"+o.summary())
		}
	}
	return line(s.Service, s.Addrs, s.Username, s.Password.Reveal(), r.Addrs, r.Username, r.Password.Reveal(), r.DB, r.Prefix, r.TLS, r.TLSOptions.summary(), tls)
}

// serverSummary prints one server's settings, the password revealed.
func serverSummary(r RedisConfig) string {
	return line(r.Addrs, r.Username, r.Password.Reveal(), r.DB, r.TLS, r.TLSOptions.summary())
}

// connectionForms are TestConnectionForms's cases: a check and what it
// prints, or no check and the error wanted.
var connectionForms = []struct {
	name, redis, version string
	check                func(RedisConfig) string
	want                 string
}{
	{
		name:  "sentinels as a list, options global",
		redis: `{"client":"predis","options":{"prefix":"p_","replication":"sentinel","service":"mymaster","parameters":{"password":"pw","database":2}},"default":["tcp://10.0.0.1:26379?timeout=0.1","10.0.0.2:26380"]}`,
		check: sentinelSummary,
		want:  "mymaster [10.0.0.1:26379 10.0.0.2:26380]   []  pw 2 p_ false  [plain plain]",
	},
	{
		name:  "the list's own options, parameters by connection name",
		redis: `{"client":"predis","options":{"cluster":"redis","parameters":{"default":{"password":"mine","database":"4"},"cache":{"password":"theirs"}}},"default":{"0":"tcp://s1:26379","1":"tcp://s2:26379","options":{"replication":"sentinel","service":"svc"}}}`,
		check: sentinelSummary,
		want:  "svc [s1:26379 s2:26379]   []  mine 4  false  [plain plain]",
	},
	{
		name:  "the list's own parameters win",
		redis: `{"client":"predis","options":{"parameters":{"password":"global"}},"default":{"0":"tcp://s1:26379","options":{"replication":"sentinel","service":"svc","parameters":{"password":"own","username":"u"}}}}`,
		check: sentinelSummary,
		want:  "svc [s1:26379]   [] u own 0  false  [plain]",
	},
	{
		name:  "sentinel credentials are the sentinel's own",
		redis: `{"client":"predis","default":{"0":"redis://watcher:spw@s1:26379/5","1":{"host":"s2","port":26379,"password":"spw","username":"watcher"},"options":{"replication":"redis-sentinel","service":"svc","parameters":{"password":"mpw"}}}}`,
		check: sentinelSummary,
		want:  "svc [s1:26379 s2:26379] watcher spw []  mpw 0  false  [plain plain]",
	},
	{
		name:  "arrays take TLS from parameters, a tcp:// URI stays plain",
		redis: `{"client":"predis","default":{"0":{"host":"s1","port":26379},"1":"tcp://s2:26379","options":{"replication":"sentinel","service":"svc","parameters":{"scheme":"tls","ssl":{"cafile":"/ca.pem","peer_name":"redis.internal"}}}}}`,
		check: sentinelSummary,
		want:  "svc [s1:26379 s2:26379]   []   0  true  TLSOptions:{peer_name:redis.internal cafile:/ca.pem} [tls TLSOptions:{peer_name:redis.internal cafile:/ca.pem} plain]",
	},
	{
		name:  "a prefix beside the sentinels",
		redis: `{"client":"predis","options":{"prefix":"global_"},"default":{"0":"tcp://s1:26379","prefix":"own_","options":{"replication":"sentinel","service":"svc"}}}`,
		check: func(r RedisConfig) string { return r.Prefix },
		want:  "own_",
	},
	{
		name:  "predis fills a server's parameters from options.parameters",
		redis: `{"client":"predis","options":{"parameters":{"password":"pw","database":3}},"default":{"host":"h","database":1}}`,
		check: serverSummary,
		want:  "[h:6379]  pw 1 false ",
	},
	{
		name:  "predis's default host",
		redis: `{"client":"predis","default":{"port":6380}}`,
		check: serverSummary,
		want:  "[127.0.0.1:6380]   0 false ",
	},
	{
		name:  "phpredis 8.x reads context.stream only",
		redis: `{"default":{"host":"tls://h","options":{"context":{"verify_peer":false,"ssl":{"verify_peer":false}}}}}`,
		check: serverSummary,
		want:  "[h:6379]   0 true ",
	},
	{
		name:    "phpredis 13.5 normalizes a flat context",
		redis:   `{"default":{"host":"tls://h","options":{"context":{"verify_peer":false}}}}`,
		version: "13.5.0",
		check:   serverSummary,
		want:    "[h:6379]   0 true  TLSOptions:{verify_peer:false}",
	},
	{
		name:    "and an ssl one",
		redis:   `{"default":{"host":"tls://h","context":{"ssl":{"peer_name":"n","local_cert":"/c.pem","local_pk":"/k.pem"}}}}`,
		version: "13.5.0",
		check:   serverSummary,
		want:    "[h:6379]   0 true  TLSOptions:{peer_name:n local_cert:/c.pem local_pk:/k.pem}",
	},
	{
		name:  "a phpredis cluster's context is flat before 13.5",
		redis: `{"clusters":{"options":{"context":{"cafile":"/ca.pem","stream":{"verify_peer":false}}},"default":[{"host":"tls://a","port":7000}]}}`,
		check: serverSummary,
		want:  "[a:7000]   0 true  TLSOptions:{cafile:/ca.pem}",
	},
	{
		name:    "and takes stream from 13.5",
		redis:   `{"clusters":{"options":{"context":{"cafile":"/ca.pem","stream":{"verify_peer":false}}},"default":[{"host":"tls://a","port":7000}]}}`,
		version: "13.5.0",
		check:   serverSummary,
		want:    "[a:7000]   0 true  TLSOptions:{verify_peer:false}",
	},
	{
		name:  "predis's ssl parameter, crypto_type and options PHP ignores",
		redis: `{"client":"predis","default":{"scheme":"tls","host":"h","ssl":{"verify_peer_name":false,"allow_self_signed":true,"SNI_enabled":false,"crypto_type":33,"crypto_method":9,"disable_compression":true,"no_such_option":1}}}`,
		check: serverSummary,
		want:  "[h:6379]   0 true  TLSOptions:{verify_peer_name:false allow_self_signed SNI_enabled:false tls:TLS 1.2-TLS 1.2}",
	},
	{
		name:  "PHP's null verify_peer verifies nothing",
		redis: `{"default":{"host":"tls://h","options":{"context":{"stream":{"verify_peer":null,"cafile":null}}}}}`,
		check: serverSummary,
		want:  "[h:6379]   0 true  TLSOptions:{verify_peer:false}",
	},
	{name: "a list with phpredis", redis: `{"default":{"0":"tcp://s1:26379","options":{"replication":"sentinel","service":"svc"}}}`, want: "Laravel's phpredis connector connects to one host and has no Sentinel support"},
	{name: "a list without replication", redis: `{"client":"predis","default":["tcp://a:6379","tcp://b:6379"]}`, want: "without options.replication 'sentinel'"},
	{name: "predis's own replication", redis: `{"client":"predis","options":{"replication":"predis"},"default":["tcp://a:6379?role=master"]}`, want: `options.replication "predis" (predis's own master/replica replication) is not supported`},
	{name: "no service", redis: `{"client":"predis","options":{"replication":"sentinel"},"default":["tcp://a:26379"]}`, want: "options.service is not set"},
	{name: "sentinels with different passwords", redis: `{"client":"predis","options":{"replication":"sentinel","service":"s"},"default":["tcp://a:26379?password=hunter2","tcp://b:26379"]}`, want: "different usernames or passwords"},
	{name: "a sentinel without host", redis: `{"client":"predis","options":{"replication":"sentinel","service":"s"},"default":[{"port":26379}]}`, want: "sentinel 0: no host"},
	{name: "a malformed sentinel URI", redis: `{"client":"predis","options":{"replication":"sentinel","service":"s"},"default":["tcp://u:hunter2@[::1"]}`, want: "sentinel 0: the URI is malformed"},
	{name: "phpredis without host", redis: `{"default":{"port":6379,"password":"hunter2"}}`, want: "no host: Laravel's phpredis connector needs one"},
	{name: "an SSL option Go cannot honour", redis: `{"default":{"host":"tls://h","options":{"context":{"stream":{"ciphers":"HIGH"}}}}}`, want: `the SSL context option "ciphers" is not one Go can honour`},
}

// TestConnectionForms: the Sentinel and TLS forms of a Redis connection,
// read as Laravel's connectors and predis or phpredis take them, and the
// forms Go refuses, each with its cause and without a password.
func TestConnectionForms(t *testing.T) {
	for _, tc := range connectionForms {
		t.Run(tc.name, func(t *testing.T) {
			version := tc.version
			if version == "" {
				version = "8.83.26"
			}
			r, err := RedisConnection("default", decode(t, tc.redis), version)
			if tc.check == nil {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !IsConfigError(err) {
					t.Fatalf("error %v, want a config error saying %q", err, tc.want)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("the error shows a password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.check(r); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
			if s := fmt.Sprintf("%v %+v %#v", r, r, r); strings.Contains(s, "pw\"") || strings.Contains(s, " pw ") || strings.Contains(s, "spw") || strings.Contains(s, "mpw") {
				t.Fatalf("printing shows a password: %s", s)
			}
		})
	}
}
