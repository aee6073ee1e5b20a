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

// TestHorizonConfig: with laravel/horizon installed, config('horizon')'s
// prefix, use, trim and silenced come back for Horizon's records, the
// same through PHP and from the files, where a key the app's
// config/horizon.php does not set comes from the package's own file
// (Horizon's mergeConfigFrom). The stand-ins below mark Horizon as
// installed (its class, its package folder); their content is the test's.
func TestHorizonConfig(t *testing.T) {
	app := copyTestApp(t)
	db := filepath.Join(app, "database", "app.sqlite")
	writeFile(t, filepath.Join(app, ".env"), "DB_CONNECTION=sqlite\nDB_DATABASE="+db+"\nQUEUE_CONNECTION=redis\nAPP_NAME='My Shop'\n")
	writeFile(t, filepath.Join(app, "horizon-installed.php"), "<?php\nnamespace Laravel\\Horizon;\nclass Horizon {}\n")
	data, err := os.ReadFile(filepath.Join(app, "bootstrap", "autoload.php"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(app, "bootstrap", "autoload.php"), string(data)+"\nrequire_once dirname(__DIR__).'/horizon-installed.php';\n")
	// The app's published config sets the prefix and trims; the package's
	// file (merged under it) sets use and silenced.
	writeFile(t, filepath.Join(app, "config", "horizon.php"), `<?php
use Illuminate\Support\Str;
return [
    'prefix' => env('HORIZON_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_horizon:'),
    'trim' => ['recent' => 30, 'completed' => 15, 'failed' => 1440],
];
`)
	writeFile(t, filepath.Join(app, "vendor", "laravel", "horizon", "config", "horizon.php"), `<?php
return [
    'use' => 'default',
    'prefix' => 'package_horizon:',
    'trim' => ['recent' => 60],
    'silenced' => ['App\Jobs\Ping'],
];
`)
	sources := map[string]string{"files": PHPOff}
	if hasPHP() {
		sources["php"] = ""
	}
	want := map[string]any{"prefix": "my_shop_horizon:", "use": "default",
		"trim":     map[string]any{"recent": 30.0, "completed": 15.0, "failed": 1440.0},
		"silenced": []any{`App\Jobs\Ping`}}
	for name, php := range sources {
		_, info, err := Load(context.Background(), Options{AppDir: app, PHP: php, Environ: []string{}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r := info.RedisQueue
		if r == nil || !r.Horizon {
			t.Fatalf("%s: redis queue %+v: want Horizon installed (warnings %v)", name, r, info.Warnings)
		}
		got := recordKeys(r.HorizonConfig)
		if name == "php" {
			// Through PHP, config('horizon') is the app's file alone here:
			// no HorizonServiceProvider merges the package's in this app.
			want := map[string]any{"prefix": "my_shop_horizon:", "use": "default", "trim": want["trim"], "silenced": nil}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("php: horizon config %#v, want %#v", got, want)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: horizon config %#v, want %#v", name, got, want)
		}
	}
}

// recordKeys are the keys of config('horizon') the job records are
// written with.
func recordKeys(hc map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"prefix", "use", "trim", "silenced"} {
		if v, ok := hc[k]; ok {
			out[k] = v
		}
	}
	return out
}

// TestHorizonSupervisorsConfig: what --horizon-supervisor reads of
// config('horizon') comes back the same through PHP and from the files:
// the environments with their keys in the config's order (the first
// Str::is match wins), the defaults, horizon.env and app.env; through
// PHP, MasterSupervisor::basename() as the app's name resolver makes it,
// and which Redis connection Horizon::use() left for the records.
func TestHorizonSupervisorsConfig(t *testing.T) {
	app := copyTestApp(t)
	db := filepath.Join(app, "database", "app.sqlite")
	writeFile(t, filepath.Join(app, ".env"), "DB_CONNECTION=sqlite\nDB_DATABASE="+db+"\nQUEUE_CONNECTION=redis\nAPP_ENV=staging\n")
	writeFile(t, filepath.Join(app, "horizon-installed.php"), `<?php
namespace Laravel\Horizon;
class Horizon {}
class MasterSupervisor {
    public static $nameResolver;
    public static function basename() { return static::$nameResolver ? call_user_func(static::$nameResolver) : 'no-resolver'; }
}
MasterSupervisor::$nameResolver = fn () => 'pod-'.getmypid() * 0 .'a';
`)
	data, err := os.ReadFile(filepath.Join(app, "bootstrap", "autoload.php"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(app, "bootstrap", "autoload.php"), string(data)+"\nrequire_once dirname(__DIR__).'/horizon-installed.php';\n")
	writeFile(t, filepath.Join(app, "config", "horizon.php"), `<?php
return [
    'defaults' => ['supervisor-1' => ['connection' => 'redis', 'queue' => ['default'], 'tries' => 1]],
    'environments' => [
        'stag*' => ['supervisor-1' => ['maxProcesses' => 2]],
        'production' => ['supervisor-1' => ['maxProcesses' => 10]],
        'local' => ['supervisor-1' => ['maxProcesses' => 3]],
    ],
];
`)
	// The package's folder: how the files say Horizon is installed.
	if err := os.MkdirAll(filepath.Join(app, "vendor", "laravel", "horizon"), 0o755); err != nil {
		t.Fatal(err)
	}
	sources := map[string]string{"files": PHPOff}
	if hasPHP() {
		sources["php"] = ""
	}
	for name, php := range sources {
		_, info, err := Load(context.Background(), Options{AppDir: app, PHP: php, Environ: []string{}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if info.RedisQueue == nil || info.RedisQueue.HorizonConfig == nil {
			t.Fatalf("%s: no Horizon config (warnings %v)", name, info.Warnings)
		}
		hc := info.RedisQueue.HorizonConfig
		if keys := hc["environment_keys"]; !reflect.DeepEqual(keys, []any{"stag*", "production", "local"}) {
			t.Errorf("%s: environment keys %#v, want the config's order", name, keys)
		}
		envs, _ := hc["environments"].(map[string]any)
		production, _ := envs["production"].(map[string]any)
		if p, _ := production["supervisor-1"].(map[string]any); p["maxProcesses"] != 10.0 {
			t.Errorf("%s: environments %#v", name, hc["environments"])
		}
		defaults, _ := hc["defaults"].(map[string]any)
		if d, _ := defaults["supervisor-1"].(map[string]any); d["tries"] != 1.0 {
			t.Errorf("%s: defaults %#v", name, hc["defaults"])
		}
		if hc["app_env"] != "staging" {
			t.Errorf("%s: app_env %#v, want staging", name, hc["app_env"])
		}
		if name == "php" && (hc["basename"] != "pod-0a" || hc["connection_made"] != nil) {
			t.Errorf("php: basename %#v (want the name resolver's pod-0a), connection made %#v (want none: no Horizon::use ran)", hc["basename"], hc["connection_made"])
		}
	}
}

// TestSharedRedisBesideADatabaseQueue: serving a database queue
// connection, config('database.redis') comes back all the same (the
// ...WithRedis middleware's connections), and the default cache store's
// array only when its driver is redis, the same through PHP and from the
// files; the Redis password never prints.
func TestSharedRedisBesideADatabaseQueue(t *testing.T) {
	app := copyTestApp(t)
	db := filepath.Join(app, "database", "app.sqlite")
	sources := map[string]string{"files": PHPOff}
	if hasPHP() {
		sources["php"] = ""
	}
	for _, store := range []string{"redis", "file"} {
		writeFile(t, filepath.Join(app, ".env"), "DB_CONNECTION=sqlite\nDB_DATABASE="+db+"\nQUEUE_CONNECTION=database\nREDIS_HOST=10.0.0.5\nREDIS_PORT=6390\nREDIS_PASSWORD=s3cret-pw\nCACHE_DRIVER="+store+"\n")
		var seen []map[string]any
		for name, php := range sources {
			cfg, info, err := Load(context.Background(), Options{AppDir: app, PHP: php, Environ: []string{}})
			if err != nil {
				t.Fatalf("%s %s: %v", store, name, err)
			}
			r := info.SharedRedis
			if info.QueueDriver != "database" || info.RedisQueue != nil || r == nil || cfg.CacheStore != store {
				t.Fatalf("%s %s: driver %q, redis queue %+v, shared %+v, cache store %q, warnings %v", store, name, info.QueueDriver, info.RedisQueue, r, cfg.CacheStore, info.Warnings)
			}
			def, _ := r.Redis["default"].(map[string]any)
			if def["host"] != "10.0.0.5" || def["port"] != "6390" || def["password"] != "s3cret-pw" {
				t.Errorf("%s %s: database.redis.default %v", store, name, def)
			}
			if store == "redis" && (r.CacheStore["driver"] != "redis" || r.CacheStore["connection"] != "cache") {
				t.Errorf("%s %s: cache store %v", store, name, r.CacheStore)
			}
			if store == "file" && r.CacheStore != nil {
				t.Errorf("%s %s: a file store's array came back: %v", store, name, r.CacheStore)
			}
			if len(info.Warnings) != 0 {
				t.Errorf("%s %s: warnings %v", store, name, info.Warnings)
			}
			printed := fmt.Sprintf("%v %+v %#v %s", info, r, r, r.Redis)
			js, _ := json.Marshal(info)
			if strings.Contains(printed+string(js), "s3cret") {
				t.Errorf("%s %s: the Redis password printed", store, name)
			}
			seen = append(seen, map[string]any(r.Redis))
		}
		if len(seen) == 2 && !reflect.DeepEqual(seen[0], seen[1]) {
			t.Errorf("%s: php and files read database.redis differently:\n%#v\n%#v", store, seen[0], seen[1])
		}
	}
}

// TestSharedRedisUnreadableWithoutPHP: a database.redis array the files
// say in a way Go does not evaluate (a function call) leaves SharedRedis
// nil; with a redis cache store beside a database queue that is a
// warning naming what is not shared, with a file store it is not.
func TestSharedRedisUnreadableWithoutPHP(t *testing.T) {
	app := copyTestApp(t)
	path := filepath.Join(app, "config", "database.php")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, strings.Replace(string(src), "'redis' => [", "'redis' => array_merge(app_redis_defaults(), [", 1))
	db := filepath.Join(app, "database", "app.sqlite")
	for store, warned := range map[string]bool{"redis": true, "file": false} {
		writeFile(t, filepath.Join(app, ".env"), "DB_CONNECTION=sqlite\nDB_DATABASE="+db+"\nQUEUE_CONNECTION=database\nCACHE_DRIVER="+store+"\n")
		_, info, err := Load(context.Background(), Options{AppDir: app, PHP: PHPOff, Environ: []string{}})
		if err != nil {
			t.Fatalf("%s: %v", store, err)
		}
		said := strings.Contains(strings.Join(info.Warnings, "\n"), "queue:restart, maxExceptions, unique locks and job middleware state are not shared")
		if info.SharedRedis != nil || said != warned {
			t.Errorf("%s: shared %+v, warnings %v", store, info.SharedRedis, info.Warnings)
		}
	}
}

// TestConfigArraysPHPWritesAsLists: config arrays that are empty come back
// from the app's PHP as json_encode writes them, [], where the reader
// wants a map: a redis queue connection whose default cache store is not
// in config/cache.php (its array is [], as (array) null is), read through
// PHP as from the files.
func TestConfigArraysPHPWritesAsLists(t *testing.T) {
	if !hasPHP() {
		t.Skip("php or Debian's php-laravel-framework is not installed")
	}
	app := copyTestApp(t)
	db := filepath.Join(app, "database", "app.sqlite")
	writeFile(t, filepath.Join(app, ".env"), "DB_CONNECTION=sqlite\nDB_DATABASE="+db+"\nQUEUE_CONNECTION=redis\nCACHE_DRIVER=nosuchstore\n")
	for name, php := range map[string]string{"php": "", "files": PHPOff} {
		_, info, err := Load(context.Background(), Options{AppDir: app, PHP: php, Environ: []string{"PATH=" + os.Getenv("PATH")}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r := info.RedisQueue; r == nil || len(r.CacheStore) != 0 || r.Queue["driver"] != "redis" {
			t.Errorf("%s: redis queue %+v", name, r)
		}
	}
}

// TestSentinelLockConnectionIsNoHost: when the redis cache store's lock
// connection is a list of sentinels (the test app's "sentinel"
// connection), Config.Redis says so in Err, through PHP and from the
// files, instead of holding REDIS_HOST's 127.0.0.1:6379; database.redis
// comes back whole for package internal/redisproto to read it.
func TestSentinelLockConnectionIsNoHost(t *testing.T) {
	app := copyTestApp(t)
	db := filepath.Join(app, "database", "app.sqlite")
	sources := map[string]string{"files": PHPOff}
	if hasPHP() {
		sources["php"] = ""
	}
	for _, lock := range []string{"sentinel", "default"} {
		writeFile(t, filepath.Join(app, ".env"), "DB_CONNECTION=sqlite\nDB_DATABASE="+db+"\nQUEUE_CONNECTION=database\nCACHE_DRIVER=redis\nREDIS_CACHE_LOCK_CONNECTION="+lock+"\nREDIS_SENTINEL_PORT=26380\n")
		for name, php := range sources {
			cfg, info, err := Load(context.Background(), Options{AppDir: app, PHP: php, Environ: []string{}})
			if err != nil {
				t.Fatalf("%s %s: %v", lock, name, err)
			}
			if cfg.Redis.LockConnection != lock {
				t.Errorf("%s %s: lock connection %q", lock, name, cfg.Redis.LockConnection)
			}
			isList := cfg.Redis.Err != nil && strings.Contains(cfg.Redis.Err.Error(), `"sentinel" is a list of servers`)
			if isList != (lock == "sentinel") {
				t.Errorf("%s %s: Err %v", lock, name, cfg.Redis.Err)
			}
			list, _ := info.SharedRedis.Redis["sentinel"].(map[string]any)
			if list["0"] != "tcp://127.0.0.1:26380?timeout=0.5" {
				t.Errorf("%s %s: database.redis.sentinel %#v", lock, name, info.SharedRedis.Redis["sentinel"])
			}
		}
	}
}
