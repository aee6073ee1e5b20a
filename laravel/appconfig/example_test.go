package appconfig_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/laraworker/laraworker/laravel/appconfig"
)

// A Config names only what differs from Laravel's defaults.
func ExampleConfig_WithDefaults() {
	cfg := appconfig.Config{Driver: "postgres", Database: "shop"}.WithDefaults()
	fmt.Println(cfg.Driver, cfg.Host, cfg.Port, cfg.Database)
	fmt.Println(cfg.JobsTable, cfg.FailedTable, cfg.DefaultQueue, cfg.RetryAfter)
	// Output:
	// pgsql 127.0.0.1 5432 shop
	// jobs failed_jobs default 90
}

// Read an app's .env alone (no PHP, no config files), as laraworker does
// for a folder without artisan. Flags (Overrides) win over the .env.
func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "appconfig-example")
	defer os.RemoveAll(dir)
	env := "DB_CONNECTION=mysql\nDB_HOST=db.internal\nDB_DATABASE=shop\nDB_PASSWORD=s3cret\nDB_QUEUE_RETRY_AFTER=300\n"
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(env), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	cfg, info, err := appconfig.Load(context.Background(), appconfig.Options{
		EnvFile: filepath.Join(dir, ".env"), EnvOnly: true, Environ: []string{},
		Overrides: map[string]string{"DB_QUEUE_TABLE": "queue_jobs"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.Source, cfg.Driver, cfg.Host, cfg.Database, cfg.JobsTable, cfg.RetryAfter)
	fmt.Println(cfg.Password) // a Secret never prints its value
	// Output:
	// env mysql db.internal shop queue_jobs 300
	// [redacted]
}

// ParseDotenv reads a .env with phpdotenv's rules.
func ExampleParseDotenv() {
	vals, err := appconfig.ParseDotenv("APP_NAME=\"My Shop\"\nDB_HOST=127.0.0.1 # local\nCACHE_PREFIX=${APP_NAME}_cache\n", func(string) (string, bool) { return "", false })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q %q %q\n", vals["APP_NAME"], vals["DB_HOST"], vals["CACHE_PREFIX"])
	// Output:
	// "My Shop" "127.0.0.1" "My Shop_cache"
}
