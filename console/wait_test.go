package console

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testwait"
)

// waitFor polls cond until it holds, failing the test with what after
// timeout: tests wait on what they can observe, never on a fixed sleep.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, timeout, what, cond)
}

// holdsFor checks that cond stays true for d: an absence (no claim while
// paused) can only be observed over a while.
func holdsFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(d); time.Now().Before(end); <-tick.C {
		if !cond() {
			t.Fatalf("%s stopped holding", what)
		}
	}
}

// httpGet is url's status and body, or status 0 while nothing answers.
func httpGet(url string) (int, string) {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
