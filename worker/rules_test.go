package worker

import (
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
)

// The attempt rules are pure functions of the payload, the attempts
// column and the configuration: each row is one case of Laravel's
// Worker::process, markJobAsFailedIfAlreadyExceedsMaxAttempts,
// markJobAsFailedIfWillExceedMaxAttempts and calculateBackoff.

func mustPayload(t *testing.T, extra string) *payload.Payload {
	t.Helper()
	raw := `{"uuid":"u","displayName":"App\\Jobs\\X","job":"Illuminate\\Queue\\CallQueuedHandler@call"` + extra +
		`,"data":{"commandName":"App\\Jobs\\X","command":"O:10:\"App\\Jobs\\X\":0:{}"}}`
	p, err := payload.Parse([]byte(raw))
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return p
}

var now = time.Unix(1_700_000_000, 0)

func TestAttemptRules(t *testing.T) {
	cases := []struct {
		name     string
		payload  string // extra payload keys
		tries    int    // Config.Tries before defaults (0: artisan's 1, <0: unlimited)
		attempts int64
		// want
		alreadyExceeded, willExceed bool
	}{
		{"first attempt, tries 1", ``, 0, 1, false, true},
		{"second attempt, tries 1 (a crashed run)", ``, 0, 2, true, true},
		{"payload maxTries wins over --tries", `,"maxTries":3`, 0, 2, false, false},
		{"last of maxTries 3", `,"maxTries":3`, 0, 3, false, true},
		{"past maxTries 3", `,"maxTries":3`, 0, 4, true, true},
		{"maxTries null falls back to --tries", `,"maxTries":null`, 5, 5, false, true},
		{"unlimited tries", ``, -1, 1000, false, false},
		{"maxTries 0 is unlimited", `,"maxTries":0`, 3, 1000, false, false},
		{"retryUntil in the future replaces tries", `,"maxTries":1,"retryUntil":1700000100`, 0, 50, false, false},
		{"retryUntil now: will exceed, not yet exceeded", `,"retryUntil":1700000000`, 0, 1, false, true},
		{"retryUntil past", `,"retryUntil":1699999999`, 0, 1, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Tries: c.tries}.WithDefaults(nil)
			p := mustPayload(t, c.payload)
			if got := cfg.alreadyExceeded(p, c.attempts, now); got != c.alreadyExceeded {
				t.Errorf("alreadyExceeded = %v, want %v", got, c.alreadyExceeded)
			}
			if got := cfg.willExceed(p, c.attempts, now); got != c.willExceed {
				t.Errorf("willExceed = %v, want %v", got, c.willExceed)
			}
		})
	}
}

func TestBackoffRule(t *testing.T) {
	cases := []struct {
		name     string
		payload  string
		flag     string
		attempts int64
		want     time.Duration
	}{
		{"default --backoff=0", ``, "", 1, 0},
		{"--backoff seconds", ``, "7", 3, 7 * time.Second},
		{"--backoff list, first attempt", ``, "1,5,10", 1, time.Second},
		{"--backoff list, clamped to the last", ``, "1,5,10", 9, 10 * time.Second},
		{"payload backoff wins", `,"backoff":"3,30"`, "1", 2, 30 * time.Second},
		{"7.x delay as backoff", `,"delay":4`, "1", 1, 4 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Backoff: c.flag}.WithDefaults(nil)
			if got := cfg.backoff(mustPayload(t, c.payload), c.attempts); got != c.want {
				t.Errorf("backoff = %s, want %s", got, c.want)
			}
		})
	}
}

func TestTimeoutRule(t *testing.T) {
	cases := []struct {
		name    string
		payload string
		flag    time.Duration
		want    time.Duration
	}{
		{"artisan's default 60", ``, 0, 60 * time.Second},
		{"--timeout", ``, 5 * time.Second, 5 * time.Second},
		{"--timeout=0 is none", ``, -1, 0},
		{"payload timeout wins", `,"timeout":2`, 5 * time.Second, 2 * time.Second},
		{"payload timeout 0 is none", `,"timeout":0`, 5 * time.Second, 0},
		{"payload timeout null falls back", `,"timeout":null`, 5 * time.Second, 5 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Timeout: c.flag}.WithDefaults(nil)
			if got := cfg.timeout(mustPayload(t, c.payload)); got != c.want {
				t.Errorf("timeout = %s, want %s", got, c.want)
			}
		})
	}
}

func TestConfigDefaultsAndValidation(t *testing.T) {
	d := Config{}.WithDefaults(nil)
	if d.Sleep != DefaultSleep || d.MemoryMB != DefaultMemoryMB || d.Timeout != DefaultTimeout || d.Tries != DefaultTries ||
		d.Concurrency != DefaultConcurrency || d.Grace != DefaultGrace || d.Unrouted != UnroutedSkip || d.Name != "default" || d.Backoff != "0" {
		t.Fatalf("zero Config does not get artisan's defaults: %+v", d)
	}
	none := Config{Sleep: -1, MemoryMB: -1, Timeout: -1, Tries: -1, Grace: -1}.WithDefaults(nil)
	if none.Sleep != 0 || none.MemoryMB != 0 || none.Timeout != 0 || none.Tries != 0 || none.Grace != 0 {
		t.Fatalf("negative values must mean none: %+v", none)
	}
	for _, bad := range []Config{
		{Concurrency: -2},
		{Unrouted: "maybe"},
		{Backoff: "5s"},
		{Backoff: "1;5"},
		{LeaseEvery: -time.Second},
	} {
		if err := bad.WithDefaults(nil).validate(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if _, err := ParseUnrouted("fial"); err == nil {
		t.Error(`ParseUnrouted("fial") gave no error`)
	}
}
