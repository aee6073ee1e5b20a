package batchlookup

import (
	"fmt"
	"testing"

	"github.com/laraworker/laraworker/jobqueue"
)

func TestBatchCacheIsBounded(t *testing.T) {
	var l Lookup
	options := []byte(`a:1:{s:13:"allowFailures";b:1;}`)
	for i := range 3 * maxCachedBatches {
		l.info(jobqueue.Batch{ID: fmt.Sprint(i), Options: options})
	}
	if n := len(l.m); n > maxCachedBatches {
		t.Fatalf("cache holds %d batches, bound %d", n, maxCachedBatches)
	}
	if info, ok := l.Cached(fmt.Sprint(3*maxCachedBatches - 1)); !ok || !info.AllowFailures {
		t.Fatal("the newest batch is not cached")
	}
}
