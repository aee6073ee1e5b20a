package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestWorkerBinaryIsACopyReadFromDisk: the workers' binary is the same
// bytes, executable, and none of its pages is in the page cache when the
// first worker starts (it reads them from disk, as an installed binary's
// first run does), where the filesystem can drop them.
func TestWorkerBinaryIsACopyReadFromDisk(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	want := bytes.Repeat([]byte("laraworker\x00"), 1<<18) // 2.75 MiB, many pages
	if err := os.WriteFile(src, want, 0o755); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	path, err := workerBinary(src, out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the copy differs (%d bytes, %v)", len(got), err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("the copy is not executable: %v %v", fi.Mode(), err)
	}
	// ReadFile above brought the pages back: copy again and look before
	// anything reads it.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if path, err = workerBinary(src, out); err != nil {
		t.Fatal(err)
	}
	if n := residentPages(t, path); n > 0 {
		var st unix.Statfs_t
		if unix.Statfs(out, &st) == nil && st.Type == unix.TMPFS_MAGIC {
			t.Skip("tmpfs keeps a file's pages in memory")
		}
		t.Fatalf("%d pages of the copy are in the page cache before any worker ran", n)
	}
}

// residentPages counts the pages of the file at path in the page cache.
func residentPages(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	pageSize := os.Getpagesize()
	vec := make([]byte, (len(mem)+pageSize-1)/pageSize)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}
