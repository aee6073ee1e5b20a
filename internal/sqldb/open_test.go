package sqldb

import (
	"testing"
	"time"
)

func TestOptionsZeroValueIsTheDefault(t *testing.T) {
	o := Options{}.WithDefaults()
	if o.Retry != DefaultRetryPolicy || o.SQLiteBusyTimeout != 5*time.Second || o.Clock == nil || o.DB != nil {
		t.Fatalf("zero Options gave %+v", o)
	}
	// A policy given without MaxAttempts still runs the transaction once.
	o = Options{Retry: RetryPolicy{BaseDelay: time.Millisecond}}.WithDefaults()
	if o.Retry.MaxAttempts != 1 || o.Retry.BaseDelay != time.Millisecond {
		t.Fatalf("retry policy = %+v, want MaxAttempts 1 and the given delay", o.Retry)
	}
}
