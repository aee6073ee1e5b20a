package maxexceptions

import (
	"context"
	"fmt"
	"testing"
)

func TestMemoryCounterIsBounded(t *testing.T) {
	c := newMemoryCounter()
	ctx := context.Background()
	for i := range maxMemoryCounters + 10 {
		if _, err := c.Increment(ctx, fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.m); n > maxMemoryCounters {
		t.Fatalf("%d counters kept, bound %d", n, maxMemoryCounters)
	}
	if n, _ := c.Increment(ctx, "again"); n != 1 {
		t.Fatalf("a new counter starts at 1, got %d", n)
	}
	if n, _ := c.Increment(ctx, "again"); n != 2 {
		t.Fatalf("a counter counts, got %d", n)
	}
}
