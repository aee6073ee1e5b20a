package procmem

import (
	"sync"
	"syscall"
)

// statm is /proc/self/statm, opened on first use and kept open: the
// worker reads it after every claim (Laravel's memoryExceeded runs on each
// loop). One pread at offset 0 renders it anew; opening, reading and
// closing it each time was five system calls (an idle worker's claim a
// second spent about a tenth of its CPU there), and os.File.ReadAt two
// (it reads again until the buffer is full or the end is met).
var statm struct {
	once sync.Once
	fd   int // -1 where it cannot be opened
}

// readStatm reads the file into buf: the bytes read, 0 when it cannot.
func readStatm(buf []byte) int {
	statm.once.Do(func() {
		fd, err := syscall.Open("/proc/self/statm", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			fd = -1
		}
		statm.fd = fd
	})
	if statm.fd < 0 {
		return 0
	}
	for {
		n, err := syscall.Pread(statm.fd, buf, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n < 0 {
			return 0
		}
		return n
	}
}
