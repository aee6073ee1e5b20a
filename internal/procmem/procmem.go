// Package procmem reads the process's own memory use from the operating
// system, for the worker's --memory limit, the fleet's heartbeat and the
// soak benchmark.
package procmem

import "os"

// RSS is the process's resident set size in bytes: the second field of
// /proc/self/statm, in pages. 0 where it cannot be read (no /proc, as on
// Windows and macOS).
func RSS() int64 {
	var buf [128]byte
	n := readStatm(buf[:])
	return residentPages(buf[:n]) * int64(os.Getpagesize())
}

// residentPages reads statm's text, "size resident shared ...": its
// second field. Parsed in place: the worker reads it after every claim,
// and splitting the text into fields cost two allocations each time.
func residentPages(text []byte) int64 {
	i := 0
	for i < len(text) && text[i] != ' ' { // size
		i++
	}
	i++
	var pages int64
	digits := 0
	for ; i < len(text) && text[i] >= '0' && text[i] <= '9'; i++ {
		pages = pages*10 + int64(text[i]-'0')
		digits++
	}
	if digits == 0 || digits > 18 {
		return 0
	}
	return pages
}
