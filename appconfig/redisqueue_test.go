package appconfig

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRedisQueueConnection: serving the app's redis queue connection, the
// app's config arrays come back as config() returns them, the same
// through PHP and from the files; the database side (failed_jobs,
// job_batches) is queue.failed's database, not the Redis connection the
// queue connection names; and the Redis password never prints.
func TestRedisQueueConnection(t *testing.T) {
	app := copyTestApp(t)
	db := filepath.Join(app, "database", "app.sqlite")
	writeFile(t, filepath.Join(app, ".env"), "DB_CONNECTION=sqlite\nDB_DATABASE="+db+"\nQUEUE_CONNECTION=redis\nREDIS_HOST=10.0.0.5\nREDIS_PORT=6390\nREDIS_PASSWORD=s3cret-pw\nCACHE_DRIVER=redis\n")
	load := func(php string) (Config, AppInfo) {
		cfg, info, err := Load(context.Background(), Options{AppDir: app, PHP: php, Environ: []string{}})
		if err != nil {
			t.Fatalf("php %q: %v", php, err)
		}
		return cfg, info
	}
	sources := map[string]string{"files": PHPOff}
	if hasPHP() {
		sources["php"] = ""
	}
	var seen []*RedisQueueConfig
	for name, php := range sources {
		cfg, info := load(php)
		r := info.RedisQueue
		if info.QueueDriver != "redis" || r == nil {
			t.Fatalf("%s: driver %q, redis queue %+v, warnings %v", name, info.QueueDriver, r, info.Warnings)
		}
		if cfg.ConnectionName != "redis" || cfg.Driver != EngineSQLite || cfg.Database != db || cfg.DefaultQueue != "default" {
			t.Errorf("%s: database side %s", name, cfg)
		}
		if r.Queue["driver"] != "redis" || r.Queue["connection"] != "default" || r.Queue["block_for"] != nil {
			t.Errorf("%s: queue connection %v", name, r.Queue)
		}
		def, _ := r.Redis["default"].(map[string]any)
		if def["host"] != "10.0.0.5" || def["port"] != "6390" || def["password"] != "s3cret-pw" {
			t.Errorf("%s: database.redis.default %v", name, def)
		}
		if r.CacheStore["driver"] != "redis" || r.CacheStore["connection"] != "cache" {
			t.Errorf("%s: cache store %v", name, r.CacheStore)
		}
		printed := fmt.Sprintf("%v %+v %#v %s", info, r, r, r.Redis)
		js, _ := json.Marshal(info)
		if strings.Contains(printed+string(js), "s3cret") {
			t.Errorf("%s: the Redis password printed", name)
		}
		seen = append(seen, r)
	}
	if len(seen) == 2 && !reflect.DeepEqual(map[string]any(seen[0].Redis), map[string]any(seen[1].Redis)) {
		t.Errorf("php and files read database.redis differently:\n%#v\n%#v", map[string]any(seen[0].Redis), map[string]any(seen[1].Redis))
	}
}

func hasPHP() bool {
	if _, err := exec.LookPath("php"); err != nil {
		return false
	}
	_, err := os.Stat("/usr/share/php/Illuminate")
	return err == nil
}
