package testredis

import (
	"context"
	"testing"
	"time"
)

// TestRestartAndKill: a restarted server answers on the same port with
// nothing kept; a killed one no longer answers.
func TestRestartAndKill(t *testing.T) {
	s := Start(t)
	c := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Restart(t)
	if n, err := c.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("after a restart: exists %d, %v; want an empty server", n, err)
	}
	s.Kill()
	if s.ping() == nil {
		t.Fatal("a killed server still answers")
	}
}
