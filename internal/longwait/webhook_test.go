package longwait

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
)

var testAlert = Alert{Connection: "redis", Queue: "default", Wait: 2 * time.Minute, Threshold: time.Minute, Ready: 3}

// TestWebhookRetriesWhatMaySucceed: a receiver that fails (5xx) or is
// busy (429) is tried again, 1 s then 2 s later on the monitor's clock,
// up to 3 times; a refusal (4xx) is not retried.
func TestWebhookRetriesWhatMaySucceed(t *testing.T) {
	for _, c := range []struct {
		statuses []int
		tries    int32
		ok       bool
	}{{[]int{500, 429, 200}, 3, true}, {[]int{503, 503, 503}, 3, false}, {[]int{400}, 1, false}} {
		var tries atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.statuses[min(int(tries.Add(1)), len(c.statuses))-1])
		}))
		fake := clock.NewFake(time.Now())
		hook, err := NewWebhook(srv.URL, fake)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- hook.Notify(context.Background(), testAlert) }()
		for want := int32(2); want <= c.tries; want++ {
			testwait.Until(t, 10*time.Second, "the backoff's timer", func() bool { return fake.Waiters() > 0 })
			fake.Advance(time.Duration(1<<(want-2)) * webhookBackoff)
		}
		err = testwait.Recv(t, done, 10*time.Second, "the delivery")
		if (err == nil) != c.ok || tries.Load() != c.tries {
			t.Errorf("statuses %v: %d tries, err %v; want %d tries, ok %v", c.statuses, tries.Load(), err, c.tries, c.ok)
		}
		srv.Close()
	}
}

// TestWebhookNeverTellsItsURL: the URL (a credential: Slack's carries
// its token) appears in no error, whatever failed.
func TestWebhookNeverTellsItsURL(t *testing.T) {
	t.Parallel() // waits on real time and child processes: beside the other waiting tests
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	secret := "T000/B000/XXXXsecretXXXX"
	hook, err := NewWebhook("http://"+addr+"/services/"+secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hook.Notify(ctx, testAlert); err == nil || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "/services/") {
		t.Errorf("error %v: want a failure that does not show the URL", err)
	}
	if _, err := NewWebhook("ftp://example.com/"+secret, nil); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("a bad URL: %v", err)
	}
}
