package bench

import (
	"io"
	"os"
	"path/filepath"
)

// workerBinary copies the executable at exe into dir, for the workers the
// bench starts, and makes the copy's pages leave the page cache where the
// system allows it (dropFromPageCache), so that the workers read it from
// disk as an installed binary's first run does. How a binary's file sits
// in the page cache decides how much of it each process maps: the same
// binary, as the linker had just written it, measured 5-7 MB more RSS
// than a copy of it or than itself once read back from disk (2026-12-07:
// idle 34.9 against 28.2-29.6 MB, a c1 drain's peak 51.7-52.5 against
// 45.8-50.0), so the memory figures depended on how the binary under test
// was made (go build, go install, a copy) rather than on the code.
func workerBinary(exe, dir string) (string, error) {
	src, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer src.Close()
	path := filepath.Join(dir, "laraworker")
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return "", err
	}
	if err := dst.Sync(); err != nil { // dirty pages cannot be dropped
		dst.Close()
		return "", err
	}
	dropFromPageCache(dst)
	return path, dst.Close()
}
