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

// TestResidentPages: the second field of statm's text, and 0 for text
// that has none (so a limit is never met by a misread).
func TestResidentPages(t *testing.T) {
	for text, want := range map[string]int64{
		"5831 2570 1311 337 0 1530 0\n": 2570,
		"1 0 0 0 0 0 0":                 0,
		"12 345":                        345,
		"12":                            0,
		"12 ":                           0,
		"":                              0,
		"12 x5":                         0,
		"12 9999999999999999999 1":      0, // too many digits to be pages
	} {
		if got := residentPages([]byte(text)); got != want {
			t.Errorf("residentPages(%q) = %d, want %d", text, got, want)
		}
	}
}
