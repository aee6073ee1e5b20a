package bridgeproto

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/testutil/phptest"
	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/laraworker/laraworker/laravel/payload"
)

// metadataByClass reads the payloads the bridge wrote on Laravel 8.83
// (testdata/laravel-8.83-metadata.jsonl, dispatched by the test app's
// `app:hooks` and `app:dispatch` with the bridge routing their classes).
func metadataByClass(t *testing.T) map[string]*Metadata {
	t.Helper()
	out := map[string]*Metadata{}
	for _, raw := range fixturePayloads(t) {
		p, err := payload.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ReadMetadata(p)
		if err != nil || m == nil {
			t.Fatalf("%s: metadata %v, %v", p.DisplayName, m, err)
		}
		if out[m.Class] == nil {
			out[m.Class] = m
		}
	}
	return out
}

// fixturePayloads are the payloads of testdata/laravel-8.83-metadata.jsonl.
func fixturePayloads(t *testing.T) [][]byte {
	t.Helper()
	f, err := os.Open("testdata/laravel-8.83-metadata.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadMetadataRewrittenByPHPAndRedis: the bridge's records read the
// same after the rewrites a payload meets on its way: `php artisan
// queue:retry` (real PHP's json_decode and json_encode: "stores":{}
// becomes []), `laraworker retry` (payload.ReencodeLikeRetry, the same
// bytes), and Laravel's Redis pop and release scripts (real Redis's
// cjson: every empty list, "errors":[] and the rest, becomes {}).
func TestReadMetadataRewrittenByPHPAndRedis(t *testing.T) {
	docs := fixturePayloads(t)
	srv := testredis.Start(t)
	byPHP := phptest.RetryJSON(t, docs...)
	emptyStores := 0
	for i, raw := range docs {
		want := readMetadata(t, "dispatched", raw)
		if bytes.Contains(raw, []byte(`"stores":{}`)) {
			emptyStores++
		}
		byGo, err := payload.ReencodeLikeRetry(raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		rewrites := map[string][]byte{
			"queue:retry":               byPHP[i],
			"laraworker retry":          byGo,
			"Redis release":             srv.CJSON(t, raw),
			"Redis release, then retry": phptest.RetryJSON(t, srv.CJSON(t, raw))[0],
		}
		for how, doc := range rewrites {
			if got := readMetadata(t, how, doc); !sameMetadata(got, want) {
				t.Errorf("%s after %s:\n got %+v\nwant %+v\n%s", want.Class, how, got, want, doc)
			}
		}
	}
	if emptyStores == 0 {
		t.Fatal(`no fixture has "stores":{}: the test proves less than it says`)
	}
}

func readMetadata(t *testing.T, how string, raw []byte) *Metadata {
	t.Helper()
	p, err := payload.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", how, err)
	}
	m, err := ReadMetadata(p)
	if err != nil || m == nil {
		t.Fatalf("%s: %s: metadata %v, %v\n%s", how, p.DisplayName, m, err, raw)
	}
	return m
}

// sameMetadata compares two records, an empty list or map equal to none
// (what the rewrites cannot tell apart).
func sameMetadata(a, b *Metadata) bool {
	return reflect.DeepEqual(emptiesAsNil(a), emptiesAsNil(b))
}

func emptiesAsNil(m *Metadata) Metadata {
	c := *m
	if len(c.Middleware) == 0 {
		c.Middleware = nil
	}
	c.Middleware = append([]Middleware(nil), c.Middleware...)
	for i := range c.Middleware {
		if len(c.Middleware[i].Limits) == 0 {
			c.Middleware[i].Limits = nil
		}
	}
	if len(c.NotCarried) == 0 {
		c.NotCarried = nil
	}
	if len(c.Models) == 0 {
		c.Models = nil
	}
	if len(c.Stores) == 0 {
		c.Stores = nil
	}
	if len(c.Errors) == 0 {
		c.Errors = nil
	}
	return c
}

func TestReadMetadataFrom883(t *testing.T) {
	m := metadataByClass(t)
	overlap := m[`App\Jobs\Hooks\OverlapJob`]
	if overlap == nil || len(overlap.Middleware) != 2 {
		t.Fatalf("OverlapJob: %+v", overlap)
	}
	wo := overlap.Middleware[0]
	if wo.Type != "WithoutOverlapping" || wo.Source != "method" || wo.CacheKey != `laravel_cachelaravel-queue-overlap:App\Jobs\Hooks\OverlapJob:7` ||
		wo.ReleaseAfter == nil || *wo.ReleaseAfter != 5 || wo.ExpiresAfter != 120 || wo.DontRelease || wo.Store != "database" {
		t.Errorf("WithoutOverlapping: %+v", wo)
	}
	if p := overlap.Middleware[1]; p.Source != "property" || !p.DontRelease || p.ReleaseAfter != nil {
		t.Errorf("the ->through() one: %+v", p)
	}
	if s := overlap.Stores["database"]; s.Driver != "database" || s.Prefix != "laravel_cache" || s.LockTable != "cache_locks" || s.LockTimeout != 86400 {
		t.Errorf("store: %+v", s)
	}

	limited := m[`App\Jobs\Hooks\LimitedJob`].Middleware
	if len(limited) != 4 || len(limited[0].Limits) != 2 || limited[0].Limits[0].MaxAttempts != 3 || limited[0].Limits[0].DecaySeconds != 60 ||
		limited[0].Limits[1].DecaySeconds != 3600 || !limited[0].Release || !limited[1].Unlimited || limited[2].Registered || limited[3].Release {
		t.Errorf("RateLimited: %+v", limited)
	}

	if th := m[`App\Jobs\Hooks\ThrottledJob`].Middleware[0]; th.Key != "laravel_throttles_exceptions:feed:Unicode a co" ||
		th.DecaySeconds != 300 || th.BackoffSeconds != 120 || th.MaxAttempts != 3 || th.By == nil || *th.By != "feed:Ünïcode & co" {
		t.Errorf("ThrottlesExceptions: %+v", th)
	}

	mixed := m[`App\Jobs\Hooks\MixedMiddlewareJob`]
	if mixed.Carried() || strings.Join(mixed.NotCarried, ",") != `App\Jobs\Middleware\CountsRuns,Closure` || mixed.Middleware[0].Type != "other" {
		t.Errorf("mixed: %+v", mixed)
	}

	u := m[`App\Jobs\Hooks\UntilProcessingJob`].Unique
	if u == nil || !u.UntilProcessing || u.Key != `laravel_unique_job:App\Jobs\Hooks\UntilProcessingJobfeed-9` || u.UniqueFor != 0 || u.Owner != nil {
		t.Errorf("unique: %+v", u)
	}

	models := m[`App\Jobs\ModelsJob`].Models
	if len(models) != 2 || models[0].Table != "podcasts" || models[0].Key != "id" || models[0].Collection || !models[1].Collection ||
		len(models[1].IDs) != 2 || string(models[1].IDs[0]) != "1" {
		t.Errorf("models: %+v", models)
	}
	if !m[`App\Jobs\DeletableModelJob`].DeleteWhenMissingModels || m[`App\Jobs\ModelsJob`].DeleteWhenMissingModels {
		t.Error("deleteWhenMissingModels")
	}
	if !m[`App\Jobs\Hooks\HookedJob`].Failed || overlap.Failed {
		t.Error("failed()")
	}
}

func TestReadMetadataAbsentOrNewer(t *testing.T) {
	p, _ := payload.Parse([]byte(`{"uuid":"u","job":"x","data":{}}`))
	if m, err := ReadMetadata(p); m != nil || err != nil {
		t.Errorf("no key: %v, %v", m, err)
	}
	raw, _ := json.Marshal(map[string]any{"uuid": "u", "job": "x", "data": map[string]any{}, "laraworker": map[string]any{"v": 2}})
	p, _ = payload.Parse(raw)
	if _, err := ReadMetadata(p); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("v2: %v", err)
	}
}

// BenchmarkReadMetadata: a record as dispatched (read in one
// json.Unmarshal), and as a Redis release leaves it (every empty list {}:
// reshaped, then read).
func BenchmarkReadMetadata(b *testing.B) {
	raw, err := os.ReadFile("testdata/laravel-8.83-metadata.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	line := raw[:bytes.IndexByte(raw, '\n')]
	released := bytes.ReplaceAll(bytes.ReplaceAll(line, []byte(`"not_carried":[]`), []byte(`"not_carried":{}`)), []byte(`"errors":[]`), []byte(`"errors":{}`))
	for name, doc := range map[string][]byte{"dispatched": line, "released": released} {
		p, err := payload.Parse(doc)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ReadMetadata(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
