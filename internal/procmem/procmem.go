// Package procmem reads the process's own memory use from the operating
// system, for the worker's --memory limit, the fleet's heartbeat and the
// soak benchmark.
package procmem

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

// statm is /proc/self/statm, opened on first use and kept open: the
// worker reads it after every claim (Laravel's memoryExceeded runs on each
// loop), and ReadAt's two preads (the text, then its end) are two of the
// five system calls of opening, reading and closing it each time (an idle
// worker's claim a second spent about a tenth of its CPU there).
var statm struct {
	once sync.Once
	mu   sync.Mutex
	f    *os.File // nil where it cannot be opened
}

// RSS is the process's resident set size in bytes: the second field of
// /proc/self/statm, in pages. 0 where it cannot be read (no /proc, as on
// Windows and macOS).
func RSS() int64 {
	statm.once.Do(func() { statm.f, _ = os.Open("/proc/self/statm") })
	if statm.f == nil {
		return 0
	}
	var buf [128]byte
	statm.mu.Lock()
	n, err := statm.f.ReadAt(buf[:], 0) // procfs renders the file anew at offset 0
	statm.mu.Unlock()
	if n == 0 && err != nil {
		return 0
	}
	return residentBytes(string(buf[:n]))
}

// residentBytes reads statm's text: its second field is the resident
// pages.
func residentBytes(text string) int64 {
	fields := strings.Fields(text)
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
