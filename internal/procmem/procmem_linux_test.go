package procmem

import (
	"syscall"
	"testing"
)

// TestRSSFollowsGrowth: the file kept open is read anew each time, so a
// later read sees pages touched after the first (a fresh mapping: the
// heap may reuse pages that are resident already).
func TestRSSFollowsGrowth(t *testing.T) {
	before := RSS()
	const size = 96 << 20
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	for i := 0; i < size; i += 4096 {
		mem[i] = 1
	}
	if after := RSS(); after < before+size/2 {
		t.Fatalf("RSS %d bytes before and %d after touching %d bytes: the second read did not see the growth", before, after, size)
	}
}
