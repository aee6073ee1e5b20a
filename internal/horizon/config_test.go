package horizon

import (
	"reflect"
	"testing"
)

// RedisJobRepository's constructor: config('horizon.trim.recent', 60),
// pending 60, completed 60, failed 10080, recent_failed = failed,
// monitored 10080; StoreTagsForFailedJob: config('horizon.trim.failed',
// 2880); Horizon::use: config('horizon.prefix') ?: 'horizon:'.
func TestFromLaravelDefaults(t *testing.T) {
	got := Defaults()
	want := Config{Prefix: "horizon:", Use: "default",
		Trim: Trim{Recent: 60, Pending: 60, Completed: 60, RecentFailed: 10080, Failed: 10080, Monitored: 10080, FailedTags: 2880}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
}

func TestFromLaravelReadsTheApp(t *testing.T) {
	got, err := FromLaravel(map[string]any{
		"prefix": "shop_horizon:", "use": "queue",
		"trim":     map[string]any{"recent": 30.0, "completed": "15", "failed": 1440.0, "monitored": 0.0},
		"silenced": []any{`App\Jobs\Ping`},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Prefix: "shop_horizon:", Use: "queue", Silenced: []string{`App\Jobs\Ping`},
		// recent_failed follows failed; the failed tags too when it is set;
		// an explicit 0 stays 0.
		Trim: Trim{Recent: 30, Pending: 60, Completed: 15, RecentFailed: 1440, Failed: 1440, Monitored: 0, FailedTags: 1440}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("config %+v, want %+v", got, want)
	}
	if _, err := FromLaravel(map[string]any{"trim": map[string]any{"failed": "a week"}}); err == nil {
		t.Error("no error for horizon.trim.failed = \"a week\"")
	}
	// An empty prefix is Horizon::use()'s fallback.
	if c, _ := FromLaravel(map[string]any{"prefix": ""}); c.Prefix != "horizon:" {
		t.Errorf("empty prefix gives %q, want horizon:", c.Prefix)
	}
}
