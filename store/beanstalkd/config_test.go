package beanstalkd

import (
	"strings"
	"testing"
	"time"
)

// TestFromLaravel: the connection's keys as BeanstalkdConnector reads
// them, with pheanstalk's defaults (port 11300, time-to-run 60, connect
// timeout 2 s) for the missing ones, env() strings read as numbers, and
// an error naming the key for what Laravel could not connect with.
func TestFromLaravel(t *testing.T) {
	skeleton := map[string]any{"driver": "beanstalkd", "host": "localhost", "queue": "default", "retry_after": 90.0, "block_for": 0.0, "after_commit": false}
	c, err := FromLaravel("beanstalkd", skeleton)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Connection: "beanstalkd", Host: "localhost", Port: 11300, Queue: "default", RetryAfter: 90 * time.Second, ConnectTimeout: 2 * time.Second}
	if c != want || c.Addr() != "localhost:11300" || c.TTR() != 90 {
		t.Fatalf("skeleton: %+v", c)
	}
	c, err = FromLaravel("q", map[string]any{"driver": "beanstalkd", "host": "::1", "port": "11400", "queue": "jobs", "retry_after": "120", "block_for": nil, "timeout": 0.5, "after_commit": true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr() != "[::1]:11400" || c.RetryAfter != 120*time.Second || c.BlockFor != 0 || c.ConnectTimeout != 500*time.Millisecond || !c.AfterCommit {
		t.Fatalf("env strings: %+v", c)
	}
	if c, _ := FromLaravel("q", map[string]any{"driver": "beanstalkd", "host": "h", "queue": "q", "after_commit": []any{}}); c.AfterCommit {
		t.Fatalf("after_commit [] is false to PHP's (bool): %+v", c)
	}
	if c, _ := FromLaravel("q", map[string]any{"driver": "beanstalkd", "host": "h", "queue": "q"}); c.RetryAfter != 60*time.Second {
		t.Fatalf("no retry_after: %+v", c)
	}
	for _, tc := range []struct {
		set  map[string]any
		want string
	}{
		{map[string]any{"host": nil}, "no host"},
		{map[string]any{"port": "eleven"}, `port "eleven"`},
		{map[string]any{"port": 70000.0}, `port "70000"`},
		{map[string]any{"queue": "a b"}, "not allowed"},
		{map[string]any{"queue": nil}, "not a tube name"},
		{map[string]any{"retry_after": -1.0}, "retry_after"},
		{map[string]any{"block_for": "soon"}, "block_for"},
		{map[string]any{"timeout": "0"}, "timeout"},
		{map[string]any{"driver": "redis"}, `driver is "redis"`},
	} {
		conf := map[string]any{}
		for k, v := range skeleton {
			conf[k] = v
		}
		for k, v := range tc.set {
			conf[k] = v
		}
		_, err := FromLaravel("beanstalkd", conf)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `queue connection "beanstalkd"`) {
			t.Errorf("%v: %v, want %q", tc.set, err, tc.want)
		}
	}
	if _, err := FromLaravel("x", nil); err == nil {
		t.Error("no configuration accepted")
	}
}

// TestVersionOK: beanstalkd 1.12 and newer have reserve-job; older ones
// (and an unreadable version) are refused at start.
func TestVersionOK(t *testing.T) {
	for v, want := range map[string]bool{"1.12": true, "1.13": true, "2.0": true, "1.12+git": true, "1.11": false, "1.4.6": false, "": false, "unknown": false} {
		if got := versionOK(v); got != want {
			t.Errorf("%q: %v", v, got)
		}
	}
}
