package appconfig

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needPHP skips without php unless LARAWORKER_E2E asks for the PHP tests.
func needPHP(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("php"); err != nil {
		if os.Getenv("LARAWORKER_E2E") != "" {
			t.Fatal("php is not installed (testdata/setup-php.sh --install-only)")
		}
		t.Skip("php is not installed")
	}
	if _, err := os.Stat("/usr/share/php/Illuminate"); err != nil {
		t.Skip("Debian's php-laravel-framework is not installed (testdata/setup-php.sh --install-only)")
	}
}

// copyTestApp copies the Laravel 8.83 test app (no .env, no databases) to
// a temp dir and returns its root.
func copyTestApp(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "laravel")
	dst := filepath.Join(t.TempDir(), "app")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if rel == ".env" || strings.HasSuffix(rel, ".sqlite") || strings.HasPrefix(rel, filepath.Join("storage", "logs")+"/") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// editFile replaces old (which must be there) by new in an app file.
func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	writeFile(t, path, strings.Replace(string(b), old, new, 1))
}

const testAppKey = "base64:c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5MTI="

// laravel8App is the test app set up as a Laravel 8 app whose user raised
// retry_after in config/queue.php only, with the 8.x skeleton's cache
// prefix expression and no CACHE_PREFIX anywhere. The .env sets
// DB_QUEUE_RETRY_AFTER, which this app's config never reads.
func laravel8App(t *testing.T) string {
	app := copyTestApp(t)
	editFile(t, filepath.Join(app, "config", "queue.php"), "(int) env('QUEUE_RETRY_AFTER', 90)", "300")
	editFile(t, filepath.Join(app, "config", "cache.php"), "<?php\n", "<?php\n\nuse Illuminate\\Support\\Str;\n")
	editFile(t, filepath.Join(app, "config", "cache.php"), "env('CACHE_PREFIX', 'laravel_cache')",
		"env('CACHE_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_cache')")
	writeFile(t, filepath.Join(app, ".env"), "APP_NAME=\"Shop Admin-Panel\"\nAPP_KEY="+testAppKey+"\n"+
		"DB_CONNECTION=mysql\nDB_HOST=db.internal\nDB_PORT=3307\nDB_DATABASE=shop\nDB_USERNAME=shop\nDB_PASSWORD=\"pw-in-dotenv\"\n"+
		"CACHE_DRIVER=database\nQUEUE_CONNECTION=database\nDB_QUEUE_RETRY_AFTER=45\n")
	return app
}

// TestAppConfigThroughPHP: the config of a real Laravel 8.83 app is read
// as Laravel resolves it: retry_after from config/queue.php (not the .env
// key the app ignores), the skeleton's cache prefix computed by PHP, the
// secrets through the pipe.
func TestAppConfigThroughPHP(t *testing.T) {
	needPHP(t)
	app := laravel8App(t)
	cfg, info, err := Load(context.Background(), Options{EnvFile: filepath.Join(app, ".env"), Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if err != nil {
		t.Fatal(err)
	}
	if info.Source != "php" || info.AppDir != app || !strings.HasPrefix(info.Version, "8.83.") || info.VersionFrom != "Application::VERSION" {
		t.Fatalf("info %+v", info)
	}
	if cfg.RetryAfter != 300 || cfg.CacheStore != "database" || cfg.CachePrefix != "shop_admin_panel_cache" || cfg.CacheTable != "cache" {
		t.Errorf("retry_after %d, cache %s/%s prefix %q; want 300 and shop_admin_panel_cache", cfg.RetryAfter, cfg.CacheStore, cfg.CacheTable, cfg.CachePrefix)
	}
	if cfg.Driver != EngineMySQL || cfg.Host != "db.internal" || cfg.Port != 3307 || cfg.Database != "shop" || cfg.Username != "shop" ||
		cfg.Password.Reveal() != "pw-in-dotenv" || cfg.AppKey.Reveal() != testAppKey || cfg.JobsTable != "jobs" || cfg.DefaultQueue != "default" ||
		cfg.ConnectionName != "database" || info.QueueDriver != "database" || info.ConnectionFrom != "queue.default" {
		t.Errorf("config %v, info %+v", cfg, info)
	}
	if d := info.Describe(); !strings.Contains(d, "through php") || !strings.Contains(d, "8.83.") || strings.Contains(d, "pw-in-dotenv") {
		t.Errorf("Describe() = %q", d)
	}

	// Flags and LARAWORKER_* still win over the app.
	cfg, _, err = Load(context.Background(), Options{EnvFile: filepath.Join(app, ".env"),
		Environ:   []string{"PATH=" + os.Getenv("PATH"), "LARAWORKER_DB_HOST=lw-host"},
		Overrides: map[string]string{"DB_QUEUE_RETRY_AFTER": "77"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RetryAfter != 77 || cfg.Host != "lw-host" {
		t.Errorf("overrides: retry_after %d host %s", cfg.RetryAfter, cfg.Host)
	}

	// The redis store's locks: the connection, its prefix and database as
	// config/database.php resolves them, the password through the pipe,
	// and Laravel 8's "prefix:" store prefix.
	cfg, _, err = Load(context.Background(), Options{EnvFile: filepath.Join(app, ".env"),
		Environ: []string{"PATH=" + os.Getenv("PATH"), "CACHE_DRIVER=redis", "REDIS_HOST=redis.internal", "REDIS_PORT=6390",
			"REDIS_DB=3", "REDIS_PASSWORD=redis-secret", "REDIS_PREFIX=shop_"}})
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Redis
	if cfg.CacheStore != "redis" || r.Addr != "redis.internal:6390" || r.DB != 3 || r.Password.Reveal() != "redis-secret" ||
		r.Prefix != "shop_" || r.StorePrefix != "shop_admin_panel_cache:" || r.Err != nil || cfg.CacheLockTable != "cache_locks" {
		t.Errorf("redis through php: store %s, %v (err %v), lock table %s", cfg.CacheStore, r, r.Err, cfg.CacheLockTable)
	}
}

// TestAppConfigWithoutPHP: with --php off the same app's files give the
// same answers (config/queue.php and config/cache.php parsed), and the
// source says so.
func TestAppConfigWithoutPHP(t *testing.T) {
	app := laravel8App(t)
	cfg, info, err := Load(context.Background(), Options{AppDir: app, PHP: PHPOff, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if info.Source != "files" || info.Why != "--php off" || info.Version != "" {
		t.Fatalf("info %+v", info)
	}
	if cfg.RetryAfter != 300 || cfg.CacheStore != "database" || cfg.CachePrefix != "shop_admin_panel_cache" || cfg.Password.Reveal() != "pw-in-dotenv" || cfg.Host != "db.internal" {
		t.Errorf("config %v prefix %q", cfg, cfg.CachePrefix)
	}
	d := info.Describe()
	for _, want := range []string{"without php (--php off)", "config/queue.php", "config/cache.php", "version unknown"} {
		if !strings.Contains(d, want) {
			t.Errorf("Describe() = %q, want %q in it", d, want)
		}
	}

	// No config/cache.php: the prefix is the detected version's skeleton
	// default (composer.lock), and the source says it was guessed.
	os.Remove(filepath.Join(app, "config", "cache.php"))
	for _, c := range []struct{ version, prefix string }{
		{"v8.83.27", "shop_admin_panel_cache"}, {"v10.48.0", "shop_admin_panel_cache_"}, {"v12.0.1", "shop_admin_panel_cache_"}, {"v12.67.0", "shop-admin-panel-cache-"},
	} {
		writeFile(t, filepath.Join(app, "composer.lock"), `{"packages":[{"name":"laravel/serializable-closure","version":"v1.3.0"},{"name":"laravel/framework","version":"`+c.version+`"}]}`)
		cfg, info, err := Load(context.Background(), Options{AppDir: app, PHP: PHPOff, Environ: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.CachePrefix != c.prefix || info.Version != strings.TrimPrefix(c.version, "v") || info.VersionFrom != "composer.lock" {
			t.Errorf("%s: prefix %q (want %q), version %s from %s", c.version, cfg.CachePrefix, c.prefix, info.Version, info.VersionFrom)
		}
		if d := info.Describe(); !strings.Contains(d, "skeleton defaults used for") || !strings.Contains(d, "cache.prefix") {
			t.Errorf("%s: Describe() = %q", c.version, d)
		}
	}
	// A cached config (php artisan config:cache) is what Laravel uses.
	writeFile(t, filepath.Join(app, "bootstrap", "cache", "config.php"), cachedConfig)
	cfg, info, err = Load(context.Background(), Options{AppDir: app, PHP: PHPOff, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RetryAfter != 1800 || cfg.JobsTable != "q_jobs" || cfg.TablePrefix != "q_" || cfg.CachePrefix != "cached_prefix" || cfg.Host != "cached-host" ||
		cfg.Password.Reveal() != "cached-pw" || cfg.AppKey.Reveal() != "base64:Y2FjaGVkLWtleS1jYWNoZWQta2V5LWNhY2hlZC1rZXk=" || !strings.Contains(info.Describe(), "bootstrap/cache/config.php") {
		t.Errorf("cached config: %v prefix %q, table prefix %q, %s", cfg, cfg.CachePrefix, cfg.TablePrefix, info.Describe())
	}
}

// cachedConfig is the shape `php artisan config:cache` writes (var_export).
const cachedConfig = `<?php return array (
  'app' => 
  array (
    'name' => 'Shop',
    'timezone' => 'UTC',
    'key' => 'base64:Y2FjaGVkLWtleS1jYWNoZWQta2V5LWNhY2hlZC1rZXk=',
  ),
  'database' => 
  array (
    'default' => 'mysql',
    'connections' => 
    array (
      'mysql' => 
      array (
        'driver' => 'mysql',
        'host' => 'cached-host',
        'port' => '3306',
        'database' => 'shop',
        'username' => 'root',
        'password' => 'cached-pw',
        'prefix' => 'q_',
      ),
    ),
  ),
  'queue' => 
  array (
    'default' => 'database',
    'connections' => 
    array (
      'database' => 
      array (
        'driver' => 'database',
        'table' => 'jobs',
        'queue' => 'default',
        'retry_after' => 1800,
        'after_commit' => false,
      ),
    ),
  ),
  'cache' => 
  array (
    'default' => 'database',
    'stores' => 
    array (
      'database' => 
      array (
        'driver' => 'database',
        'table' => 'cache',
        'connection' => NULL,
      ),
    ),
    'prefix' => 'cached_prefix',
  ),
);
`

// TestAppConfigBadPaths: a --env or --app that does not exist is an error
// naming it, never a silent fallback to defaults.
func TestAppConfigBadPaths(t *testing.T) {
	dir := t.TempDir()
	for _, opts := range []Options{
		{EnvFile: filepath.Join(dir, "missing", ".env")},
		{AppDir: filepath.Join(dir, "missing")},
		{AppDir: dir}, // a folder without artisan
	} {
		_, _, err := Load(context.Background(), opts)
		if !errors.Is(err, ErrAppNotFound) || !strings.Contains(err.Error(), "missing") && !strings.Contains(err.Error(), "artisan") {
			t.Errorf("%+v: err %v", opts, err)
		}
	}
}

// TestAppConfigPHPFailure: an app that does not boot is an error with
// PHP's last words and the way out, and without the app's secrets.
func TestAppConfigPHPFailure(t *testing.T) {
	needPHP(t)
	app := laravel8App(t)
	writeFile(t, filepath.Join(app, "config", "broken.php"), "<?php\nthrow new RuntimeException('config broken on purpose');\n")
	_, _, err := Load(context.Background(), Options{AppDir: app, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if err == nil || !strings.Contains(err.Error(), "config broken on purpose") || !strings.Contains(err.Error(), "--php off") ||
		strings.Contains(err.Error(), "pw-in-dotenv") || strings.Contains(err.Error(), "c2VjcmV0") {
		t.Fatalf("err %v", err)
	}
	// A PHP that hangs is stopped at the timeout.
	hang := filepath.Join(t.TempDir(), "php")
	writeFile(t, hang, "#!/bin/sh\nsleep 30\n")
	os.Chmod(hang, 0o755)
	start := time.Now()
	_, _, err = Load(context.Background(), Options{AppDir: app, PHP: hang, Timeout: 300 * time.Millisecond, Environ: []string{}})
	if err == nil || !strings.Contains(err.Error(), "did not finish") || time.Since(start) > 10*time.Second {
		t.Fatalf("hanging php: %v after %s", err, time.Since(start))
	}
}

// TestStrSlugMatchesPHP compares StrSlug with Laravel's own Str::slug.
func TestStrSlugMatchesPHP(t *testing.T) {
	needPHP(t)
	titles := []string{"Laravel", "My App", "Shop Admin-Panel", "a__b--c", "  spaced  out ", "x@y.z", "Ends-", "UPPER_lower 123", "dots.and/slashes!", ""}
	for _, sep := range []string{"_", "-"} {
		script := "require 'Illuminate/autoload.php'; foreach (json_decode(stream_get_contents(STDIN)) as $t) { echo Illuminate\\Support\\Str::slug($t, '" + sep + "'), \"\\n\"; }"
		cmd := exec.Command("php", "-r", script)
		cmd.Stdin = strings.NewReader(`["` + strings.Join(titles, `","`) + `"]`)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		for i, title := range titles {
			got, ok := StrSlug(title, sep)
			if !ok || got != want[i] {
				t.Errorf("StrSlug(%q, %q) = %q, %v; PHP says %q", title, sep, got, ok, want[i])
			}
		}
	}
	if _, ok := StrSlug("Café", "_"); ok {
		t.Error("non-ASCII titles must be refused (Str::ascii transliterates them)")
	}
}
