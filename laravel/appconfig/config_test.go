package appconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseDotenv(t *testing.T) {
	src := "# comment\n" +
		"APP_NAME=Laravel\n" +
		"export DB_HOST = 10.0.0.5 \n" +
		"DB_USERNAME='single ${APP_NAME} #not comment'\n" +
		"DB_PASSWORD=\"dq \\\"x\\\" \\n \\$HOME ${APP_NAME} \\\\\" # trailing comment\n" +
		"UNQ=${APP_NAME}_x # inline comment\n" +
		"HASH=a#b\n" +
		"EMPTY=\n" +
		"BARE\n" +
		"FROM_ENV=${REAL_ENV}\n" +
		"MULTI=\"line1\nline2\"\n" +
		"DOTTED.KEY=1\n"
	vals, err := ParseDotenv(src, func(k string) (string, bool) {
		if k == "REAL_ENV" {
			return "from-process", true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"APP_NAME": "Laravel", "DB_HOST": "10.0.0.5", "DB_USERNAME": "single ${APP_NAME} #not comment",
		"DB_PASSWORD": "dq \"x\" \n $HOME Laravel \\", "UNQ": "Laravel_x", "HASH": "a#b", "EMPTY": "",
		"FROM_ENV": "from-process", "MULTI": "line1\nline2", "DOTTED.KEY": "1",
	}
	if len(vals) != len(want) {
		t.Errorf("got %d keys: %q", len(vals), vals)
	}
	for k, v := range want {
		if vals[k] != v {
			t.Errorf("%s = %q, want %q", k, vals[k], v)
		}
	}
	for _, bad := range []string{"A=\"unterminated\n", "A='x' junk\n", "BAD KEY=1\n"} {
		_, err := ParseDotenv(bad, nil)
		if err == nil || strings.Contains(err.Error(), "unterminated\"") {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}

func writeEnv(t *testing.T, content string) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoadEnvDefaultsAndPrecedence(t *testing.T) {
	// Nothing configured: sqlite at database/database.sqlite.
	dir := t.TempDir()
	cfg, err := loadEnv(Options{BaseDir: dir, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Driver != EngineSQLite || cfg.Database != filepath.Join(dir, "database", "database.sqlite") ||
		cfg.JobsTable != "jobs" || cfg.FailedTable != "failed_jobs" || cfg.BatchesTable != "job_batches" ||
		cfg.RetryAfter != 90 || cfg.DefaultQueue != "default" || cfg.ConnectionName != "database" || cfg.AppTimezone != "UTC" {
		t.Fatalf("defaults: %v", cfg)
	}

	dir = writeEnv(t, "DB_CONNECTION=mysql\nDB_HOST=envfile\nDB_PORT=3307\nDB_DATABASE=app\nDB_USERNAME=u\nDB_PASSWORD=\"s3cr3t-pw\"\n"+
		"APP_KEY=base64:c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0a2V5MTI=\nAPP_PREVIOUS_KEYS=\"k1, k2\"\nDB_QUEUE_TABLE=my_jobs\nDB_QUEUE=emails\nDB_QUEUE_RETRY_AFTER=120\nAPP_TIMEZONE=Europe/Paris\n")
	cfg, err = loadEnv(Options{BaseDir: dir, Environ: []string{"DB_DATABASE=proc", "LARAWORKER_DB_HOST=lw-host", "DB_HOST=proc-host"}, Overrides: map[string]string{"DB_QUEUE": "cli"}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Driver != EngineMySQL || cfg.Host != "lw-host" || cfg.Port != 3307 || cfg.Database != "proc" || cfg.Username != "u" ||
		cfg.Password.Reveal() != "s3cr3t-pw" || cfg.JobsTable != "my_jobs" || cfg.DefaultQueue != "cli" || cfg.RetryAfter != 120 ||
		len(cfg.AppPreviousKeys) != 2 || cfg.AppPreviousKeys[1].Reveal() != "k2" || cfg.AppTimezone != "Europe/Paris" {
		t.Fatalf("precedence: %v", cfg)
	}
	assertRedacted(t, cfg, "s3cr3t-pw", "c2VjcmV0a2V5", "k2")
}

func TestLoadEnvURLs(t *testing.T) {
	cases := []struct {
		url, driver, host, db, user, pw string
		port                            int
	}{
		{"mysql://bob:p%40ss@db.example:3310/shop", EngineMySQL, "db.example", "shop", "bob", "p@ss", 3310},
		{"mariadb://bob@db/shop", EngineMariaDB, "db", "shop", "bob", "", 3306},
		{"pgsql://pg:pw@pghost/app", EnginePgSQL, "pghost", "app", "pg", "pw", 5432},
		{"postgres://pg@pghost:6543/app", EnginePgSQL, "pghost", "app", "pg", "", 6543},
		{"postgresql://pg@pghost/app", EnginePgSQL, "pghost", "app", "pg", "", 5432},
		{"sqlite:///var/db/app.sqlite", EngineSQLite, "", "/var/db/app.sqlite", "", "", 0},
	}
	for _, c := range cases {
		cfg, err := loadEnv(Options{BaseDir: t.TempDir(), Environ: []string{"LARAWORKER_DB_URL=" + c.url}})
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		if cfg.Driver != c.driver || cfg.Host != c.host || cfg.Database != c.db || cfg.Username != c.user || cfg.Password.Reveal() != c.pw || cfg.Port != c.port {
			t.Errorf("%s: %v", c.url, cfg)
		}
	}
	// DATABASE_URL works too; a bad URL error does not echo it.
	_, err := loadEnv(Options{BaseDir: t.TempDir(), Environ: []string{"DATABASE_URL=::not a url:pw-in-url"}})
	if err == nil || strings.Contains(err.Error(), "pw-in-url") {
		t.Fatalf("bad url: %v", err)
	}
}

func TestConfigValidation(t *testing.T) {
	for _, name := range []string{"jobs;drop", "1jobs", "a.b.c", "x`y", strings.Repeat("a", 65), "", "jobs "} {
		if ValidateTableName(name) == nil {
			t.Errorf("table name %q accepted", name)
		}
	}
	for _, name := range []string{"jobs", "_j", "public.jobs", "Jobs_2"} {
		if err := ValidateTableName(name); err != nil {
			t.Errorf("table name %q rejected: %v", name, err)
		}
	}
	_, err := loadEnv(Options{BaseDir: t.TempDir(), Environ: []string{"DB_CONNECTION=sqlsrv"}})
	if err == nil {
		t.Error("sqlsrv accepted")
	}
	_, err = loadEnv(Options{BaseDir: t.TempDir(), Environ: []string{}, Overrides: map[string]string{"DB_QUEUE_TABLE": "jobs where 1=1"}})
	if err == nil {
		t.Error("bad table override accepted")
	}
}

func assertRedacted(t *testing.T, v any, secrets ...string) {
	t.Helper()
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%T %v"} {
		out := fmt.Sprintf(format, v)
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s leaks a secret: %s", format, out)
			}
		}
	}
	if ptr := fmt.Sprintf("%+v", &v); strings.Contains(ptr, secrets[0]) {
		t.Errorf("pointer formatting leaks: %s", ptr)
	}
}

func TestSecretRedaction(t *testing.T) {
	s := Secret("hunter2")
	assertRedacted(t, s, "hunter2")
	assertRedacted(t, struct{ P Secret }{s}, "hunter2")
	if s.Reveal() != "hunter2" {
		t.Fatal("Reveal")
	}
	err := ScrubError(errors.New("auth failed for hunter2@host"), s)
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatal(err)
	}
}

func TestCacheSettingsFollowTheSkeleton(t *testing.T) {
	for _, c := range []struct {
		env                  map[string]string
		store, table, prefix string
	}{
		{map[string]string{"CACHE_DRIVER": "database"}, "database", "cache", "laravel_cache"},
		{map[string]string{"CACHE_STORE": "database", "APP_NAME": "My Shop"}, "database", "cache", "my_shop_cache_"},
		{map[string]string{"CACHE_STORE": "redis", "CACHE_PREFIX": ""}, "redis", "cache", ""},
		{map[string]string{"CACHE_DRIVER": "database", "DB_CACHE_TABLE": "app_cache", "CACHE_PREFIX": "x"}, "database", "app_cache", "x"},
	} {
		store, table, prefix := cacheSettings(c.env)
		if store != c.store || table != c.table || prefix != c.prefix {
			t.Errorf("%v: %q %q %q", c.env, store, table, prefix)
		}
	}
}
