package snapshot

import (
	"runtime"
	"slices"
	"strconv"
	"testing"
)

func TestTagsOfModels(t *testing.T) {
	got := TagsOf(fixture(t, "models", ""))
	if want := []string{`App\Models\Podcast:42`, `App\Models\User:1`, `App\Models\User:2`}; !slices.Equal(got, want) {
		t.Errorf("tags %v, want %v", got, want)
	}
	for _, name := range []string{"noop", "scalars", "encrypted-aes-256-cbc"} {
		if got := TagsOf(fixture(t, name, "")); got != nil {
			t.Errorf("%s: tags %v", name, got)
		}
	}
}

// TestTagSetFreesTags: a tag lives as long as a row holds it; freed
// places are reused, and the set stays bounded.
func TestTagSetFreesTags(t *testing.T) {
	s := newTagSet()
	s.set(1, []string{"A:1", "B:1"})
	s.set(2, []string{"A:1"})
	if got := s.rowsWith("A:1"); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("rows with A:1: %v", got)
	}
	s.drop(1)
	if s.distinct() != 1 || s.rowsWith("B:1") != nil || !slices.Equal(s.of(2), []string{"A:1"}) {
		t.Errorf("after dropping row 1: %d tags, %v", s.distinct(), s.of(2))
	}
	s.set(3, []string{"C:1"})
	if len(s.names) != 2 {
		t.Errorf("a freed place was not reused: %d names", len(s.names))
	}
	s.set(2, nil)
	s.drop(3)
	if s.distinct() != 0 || len(s.byRow) != 0 {
		t.Errorf("left %d tags, %d rows", s.distinct(), len(s.byRow))
	}
}

// BenchmarkTagMemory measures what tags add to the job cache's 32 bytes
// a row (docs/DASHBOARD.md, "Cost"): 1,000,000 jobs each holding its own model, then
// each holding the same one.
//
//	go test -run '^$' -bench TagMemory -benchtime 1x ./internal/dashboard/snapshot/
func BenchmarkTagMemory(b *testing.B) {
	const rows = 1_000_000
	for _, c := range []struct {
		name string
		tag  func(i int) string
	}{
		{"own-model", func(i int) string { return `App\Models\Order:` + strconv.Itoa(1_000_000+i) }},
		{"shared-model", func(int) string { return `App\Models\Podcast:42` }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				before := heapInUse()
				s := newTagSet()
				for i := range rows {
					s.set(int64(i+1), []string{c.tag(i)})
				}
				after := heapInUse()
				runtime.KeepAlive(s)
				b.ReportMetric(float64(after-before)/rows, "bytes/job")
			}
		})
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
