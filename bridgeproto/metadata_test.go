package bridgeproto

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/payload"
)

// metadataByClass reads the payloads the bridge wrote on Laravel 8.83
// (testdata/laravel-8.83-metadata.jsonl, dispatched by the test app's
// `app:hooks` and `app:dispatch` with the bridge routing their classes).
func metadataByClass(t *testing.T) map[string]*Metadata {
	t.Helper()
	f, err := os.Open("testdata/laravel-8.83-metadata.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]*Metadata{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		p, err := payload.Parse(sc.Bytes())
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
