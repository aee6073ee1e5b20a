package appconfig

import (
	"fmt"
	"strings"
	"testing"
)

func TestRedisSettingsAsTheSkeletonReadsThem(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want RedisConfig
	}{
		{map[string]string{}, RedisConfig{Client: "phpredis", Addr: "127.0.0.1:6379", DB: 0, Prefix: "laravel_database_", LockConnection: "default"}},
		{map[string]string{"APP_NAME": "My Shop", "REDIS_HOST": "10.0.0.5", "REDIS_PORT": "6380", "REDIS_DB": "3", "REDIS_CLIENT": "predis"},
			RedisConfig{Client: "predis", Addr: "10.0.0.5:6380", DB: 3, Prefix: "my_shop_database_", LockConnection: "default"}},
		{map[string]string{"REDIS_CACHE_LOCK_CONNECTION": "cache", "REDIS_CACHE_DB": "5", "REDIS_PREFIX": ""},
			RedisConfig{Client: "phpredis", Addr: "127.0.0.1:6379", DB: 5, Prefix: "", LockConnection: "cache"}},
		{map[string]string{"REDIS_URL": "tls://user:pw@redis.example:6390/2", "REDIS_HOST": "ignored"},
			RedisConfig{Client: "phpredis", Addr: "redis.example:6390", Username: "user", Password: "pw", DB: 2, TLS: true, Prefix: "laravel_database_", LockConnection: "default"}},
	}
	for _, c := range cases {
		got, err := redisSettings(c.env)
		if err != nil {
			t.Fatalf("%v: %v", c.env, err)
		}
		if got != c.want {
			t.Errorf("%v:\n got  %#v\n want %#v", c.env, got, c.want)
		}
	}
}

func TestRedisSettingsRefuseWhatGoCannotRead(t *testing.T) {
	got, err := redisSettings(map[string]string{"REDIS_CACHE_LOCK_CONNECTION": "locks"})
	if err != nil || got.Err == nil || !strings.Contains(got.Err.Error(), `"locks"`) {
		t.Errorf("an unknown lock connection: err %v, Err %v", err, got.Err)
	}
	for _, env := range []map[string]string{{"REDIS_PORT": "x"}, {"REDIS_DB": "-1"}, {"REDIS_URL": "http://h/1"}, {"REDIS_URL": "redis://:secret@h/db"}} {
		if _, err := redisSettings(env); err == nil {
			t.Errorf("%v accepted", env)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("the error shows the URL's password: %v", err)
		}
	}
}

func TestRedisConfigNeverPrintsThePassword(t *testing.T) {
	c := RedisConfig{Addr: "h:1", Password: "s3cret-pw"}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprint(Config{Redis: c})} {
		if strings.Contains(s, "s3cret") {
			t.Errorf("printed the password: %s", s)
		}
	}
}

// TestRedisStorePrefix: RedisStore::setPrefix added ":" on 8-10 (removed
// in 11.0, "Stop magic prefixing"); LoadConfig guesses the version as the
// cache prefix's default does.
func TestRedisStorePrefix(t *testing.T) {
	for _, c := range []struct{ prefix, version, want string }{
		{"laravel_cache", "8.83", "laravel_cache:"},
		{"laravel_cache", "10.50", "laravel_cache:"},
		{"", "9.52", ""},
		{"laravel_cache_", "11.0", "laravel_cache_"},
		{"my-app-cache-", "12.67", "my-app-cache-"},
	} {
		if got := RedisStorePrefix(c.prefix, c.version); got != c.want {
			t.Errorf("%q on %s: %q, want %q", c.prefix, c.version, got, c.want)
		}
	}
	for env, want := range map[string]string{"CACHE_DRIVER=redis": "laravel_cache:", "CACHE_STORE=redis": "laravel_cache_"} {
		cfg, err := loadEnv(Options{EnvFile: "/nonexistent/.env", Environ: []string{env}})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Redis.StorePrefix != want {
			t.Errorf("%s: store prefix %q, want %q", env, cfg.Redis.StorePrefix, want)
		}
	}
}
