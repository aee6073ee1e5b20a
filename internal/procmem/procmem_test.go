package procmem

import (
	"runtime"
	"testing"
)

func TestRSSCoversTheLiveHeap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RSS is read from /proc")
	}
	keep := make([]byte, 64<<20)
	for i := range keep {
		keep[i] = 1 // touched, so resident
	}
	if rss := RSS(); rss < int64(len(keep)) {
		t.Fatalf("RSS %d bytes with %d bytes of touched heap", rss, len(keep))
	}
	runtime.KeepAlive(keep)
}
