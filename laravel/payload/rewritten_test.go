package payload

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/laraworker/laraworker/internal/testutil/phptest"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
)

// TestPayloadsRewrittenByPHPAndRedis: every real payload of the fixtures
// (Laravel 8.83, 10.50 and 12.67) reads the same after the rewrites a
// payload meets: `php artisan queue:retry` (real PHP's json_decode and
// json_encode: an empty object, such as the context's, becomes []),
// `laraworker retry` (ReencodeLikeRetry) and Laravel's Redis release
// (real Redis's cjson: every empty list becomes {}, keys lose their
// order): its keys, its data, its unique lock.
func TestPayloadsRewrittenByPHPAndRedis(t *testing.T) {
	var docs [][]byte
	var names []string
	for _, dir := range []string{"../../testdata/payloads", "../../testdata/laravel-10.50/payloads", "../../testdata/laravel-12.67/payloads"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no fixtures in %s: %v", dir, err)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Parse(raw); err != nil || !isOneLine(raw) {
				continue // not a payload (*.all.json, rows, options)
			}
			docs, names = append(docs, raw), append(names, f)
		}
	}
	srv := testredis.Start(t)
	byPHP := phptest.RetryJSON(t, docs...)
	for i, raw := range docs {
		want := readPayload(t, names[i], raw)
		byGo, err := ReencodeLikeRetry(raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		for how, doc := range map[string][]byte{"queue:retry": byPHP[i], "laraworker retry": byGo, "Redis release": srv.CJSON(t, raw)} {
			if got := readPayload(t, names[i]+" after "+how, doc); !reflect.DeepEqual(got, want) {
				t.Errorf("%s after %s:\n got %+v\nwant %+v", names[i], how, got, want)
			}
		}
	}
}

func isOneLine(raw []byte) bool {
	for i, c := range raw {
		if c == '\n' && i != len(raw)-1 {
			return false
		}
	}
	return true
}

// readPayloadResult is what a worker reads of a payload.
type readPayloadResult struct {
	UUID, DisplayName, Job, CommandName, Command string
	MaxTries, Timeout, RetryUntil                *int64
	BatchID                                      *string
	Lock                                         UniqueLock
	Locked                                       bool
	Extra                                        []string
}

func readPayload(t *testing.T, name string, raw []byte) readPayloadResult {
	t.Helper()
	p, err := Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	lock, ok, err := p.UniqueLock()
	if err != nil {
		t.Fatalf("%s: unique lock: %v", name, err)
	}
	r := readPayloadResult{UUID: p.UUID, DisplayName: p.DisplayName, Job: p.Job, CommandName: p.Data.CommandName, Command: p.Data.Command,
		MaxTries: p.MaxTries, Timeout: p.Timeout, RetryUntil: p.RetryUntil, BatchID: p.Data.BatchID, Lock: lock, Locked: ok}
	for k := range p.Extra {
		r.Extra = append(r.Extra, k)
	}
	slices.Sort(r.Extra)
	return r
}
