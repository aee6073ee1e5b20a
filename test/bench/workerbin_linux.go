package bench

import (
	"os"

	"golang.org/x/sys/unix"
)

// dropFromPageCache asks the kernel to drop f's cached pages (clean once
// synced); a failure only leaves them cached.
func dropFromPageCache(f *os.File) {
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
