package laravel

import (
	"testing"
	"time"
)

func TestOptionsZeroValueIsTheDefault(t *testing.T) {
	o := Options{}.withDefaults()
	if o.Retry != DefaultRetryPolicy || o.SQLiteBusyTimeout != 5*time.Second || o.Clock == nil || o.DB != nil || o.ExactStatements {
		t.Fatalf("zero Options gave %+v", o)
	}
	// A policy given without MaxAttempts still runs the transaction once.
	o = Options{Retry: RetryPolicy{BaseDelay: time.Millisecond}}.withDefaults()
	if o.Retry.MaxAttempts != 1 || o.Retry.BaseDelay != time.Millisecond {
		t.Fatalf("retry policy = %+v, want MaxAttempts 1 and the given delay", o.Retry)
	}
}

func TestOpenKeepsACallersPool(t *testing.T) {
	cfg := engineConfig(t, EngineSQLite, t.TempDir())
	own, err := openDB(cfg, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { own.Close() }) // after the tables are dropped
	e := openEnv(t, EngineSQLite, cfg, Options{DB: own})
	if err := e.q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := own.Ping(); err != nil {
		t.Fatalf("Close closed the caller's pool: %v", err)
	}
}
