package payload

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUniqueLockFrom1267Payloads: only the ShouldBeUnique job's payload
// names a lock; its key and store are the ones UniqueJob's dispatch took.
func TestUniqueLockFrom1267Payloads(t *testing.T) {
	files, err := filepath.Glob("../../testdata/laravel-12.67/payloads/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no 12.67 fixtures: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(raw)
		if err != nil {
			continue // *.all.json and *_row.json are not payloads
		}
		lock, ok, err := p.UniqueLock()
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if filepath.Base(f) == "unique.json" {
			if !ok || lock != (UniqueLock{Key: `laravel_unique_job:App\Jobs\UniqueJob:1`, Store: "database"}) {
				t.Errorf("unique.json: lock %+v, %v", lock, ok)
			}
		} else if ok {
			t.Errorf("%s names a lock: %+v", f, lock)
		}
	}
}

func TestUniqueLockContextShapes(t *testing.T) {
	cases := []struct {
		raw  string
		want UniqueLock
		ok   bool
		bad  bool
	}{
		{`{"illuminate:log:context":{"data":[],"hidden":[]}}`, UniqueLock{}, false, false},
		{`{"illuminate:log:context":{"data":{"request_id":"s:3:\"abc\";"},"hidden":{}}}`, UniqueLock{}, false, false},
		{`{"illuminate:log:context":{"data":[],"hidden":{"laravel_unique_job_cache_store":"s:5:\"redis\";","laravel_unique_job_key":"s:5:\"k:1:2\";","laravel_unique_job_lock_owner":"s:3:\"own\";"}}}`,
			UniqueLock{Key: "k:1:2", Store: "redis", Owner: "own"}, true, false},
		{`{"illuminate:log:context":{"data":[],"hidden":{"laravel_unique_job_cache_store":"s:5:\"redis\";","laravel_unique_job_key":"s:5:\"k:1:2\";","laravel_unique_job_lock_owner":"s:0:\"\";"}}}`,
			UniqueLock{Key: "k:1:2", Store: "redis"}, true, false},
		{`{"illuminate:log:context":{"data":[],"hidden":{"laravel_unique_job_key":"i:5;","laravel_unique_job_cache_store":"s:5:\"redis\";"}}}`, UniqueLock{}, false, true},
		{`{"illuminate:log:context":"nonsense"}`, UniqueLock{}, false, true},
	}
	for _, c := range cases {
		p, err := Parse([]byte(c.raw))
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := p.UniqueLock()
		if (err != nil) != c.bad || ok != c.ok || got != c.want {
			t.Errorf("%s: %+v %v %v", c.raw, got, ok, err)
		}
	}
}
