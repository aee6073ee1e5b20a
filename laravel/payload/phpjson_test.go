package payload

import (
	"encoding/json"
	"os"
	"testing"
)

// retryCases are the queue:retry documents of testdata/json/cases.json,
// written by real PHP (testdata/php/gen-json.php).
func retryCases(t *testing.T) []struct{ Raw, Retried string } {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/json/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Retry []struct{ Raw, Retried string } `json:"retry"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Retry) == 0 {
		t.Fatal("cases.json has no retry cases")
	}
	return c.Retry
}

func TestReencodeLikeRetryMatchesQueueRetry(t *testing.T) {
	for _, c := range retryCases(t) {
		got, err := ReencodeLikeRetry([]byte(c.Raw), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.Raw, err)
		}
		if string(got) != c.Retried {
			t.Errorf("retry re-encoding differs from PHP\n got: %s\nwant: %s", got, c.Retried)
		}
	}
}

func TestReencodeLikeRetryRefreshesRetryUntil(t *testing.T) {
	until := int64(1900000000)
	got, err := ReencodeLikeRetry([]byte(`{"uuid":"a","retryUntil":5,"data":{}}`), &until)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"uuid":"a","retryUntil":1900000000,"data":[]}`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
