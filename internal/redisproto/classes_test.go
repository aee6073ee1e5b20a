package redisproto

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestClassesAreReadInsideRedis: SampleClasses names the classes of a
// queue's first jobs (list, then delayed set, in the order a pop finds
// them) and CountClasses counts a queue's jobs by class, both inside
// Redis: a job of 20 MB on the queue costs Go what a small one does.
// Names are read as PHP wrote them (escaped backslashes and slashes),
// after the data where Redis's cjson re-encoded a payload, and decoded
// when escaped otherwise; a job that is not JSON has no class.
func TestClassesAreReadInsideRedis(t *testing.T) {
	srv := server(t)
	cfg := testConfig(srv.Addr, "cl_")
	q := openQueue(t, cfg, newClock())
	ctx := ctxT(t)
	rc := srv.Client(t)
	k := cfg.Keys("")
	for range 120 {
		if _, err := q.Push(ctx, "", payloadFor("n", "n", 0, "")); err != nil {
			t.Fatal(err)
		}
	}
	big := strings.Replace(string(foreignFor("big", "b")), `"data":{`, `"pad":"`+strings.Repeat("x", 20<<20)+`","data":{`, 1)
	late := string(displayNameLast(t, foreignFor("late", "l")))
	for _, raw := range []string{big, late, `{"uuid":"u","displayName":"App\\Jobs\\Caf\u00e9","attempts":0}`, "not json"} {
		rc.RPush(ctx, k.Ready, raw)
	}
	for i := range 3 {
		if _, err := q.Later(ctx, "", payloadFor(fmt.Sprint("d", i), "d", 0, ""), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.Pop(ctx, "", PopOptions{}); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	names, err := q.SampleClasses(ctx, "", 1000)
	counts, cerr := q.CountClasses(ctx, "", []string{`app\jobs\noopjob`, phpOnly, `App\Jobs\Café`})
	runtime.ReadMemStats(&after)
	if err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("reading the classes allocated %d bytes with a job of 20 MB on the queue", alloc)
	}
	byName := map[string]int{}
	for _, n := range names {
		byName[n]++
	}
	want := map[string]int{`App\Jobs\NoopJob`: 119 + 3, phpOnly: 2, `App\Jobs\Café`: 1, "": 1}
	if len(names) != 126 || len(byName) != len(want) {
		t.Fatalf("sampled %d names: %v, want %v", len(names), byName, want)
	}
	for n, c := range want {
		if byName[n] != c {
			t.Fatalf("sampled %v, want %v", byName, want)
		}
	}
	if c := counts[0]; c.Ready != 119 || c.Delayed != 3 || c.Reserved != 1 {
		t.Fatalf("NoopJob counts %+v", c)
	}
	if c := counts[1]; c.Ready != 2 || c.Delayed != 0 || c.Reserved != 0 {
		t.Fatalf("PhpOnly counts %+v", c)
	}
	if c := counts[2]; c.Ready != 1 {
		t.Fatalf("Café counts %+v", c)
	}
	if names, err := q.SampleClasses(ctx, "", 121); err != nil || len(names) != 121 || names[119] != phpOnly || names[120] != phpOnly {
		t.Fatalf("sample of 121: %d names, %v", len(names), err)
	}
}
