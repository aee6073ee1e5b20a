// Package procmem reads the process's own memory use from the operating
// system, for the worker's --memory limit, the fleet's heartbeat and the
// soak benchmark.
package procmem

import (
	"os"
	"strconv"
	"strings"
)

// RSS is the process's resident set size in bytes: the second field of
// /proc/self/statm, in pages. 0 where it cannot be read (no /proc, as on
// Windows and macOS).
func RSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
