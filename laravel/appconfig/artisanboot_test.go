package appconfig

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/testutil/phptest"
)

// TestConfigReaderBootsAsArtisanDoes: the reader runs what the app's own
// artisan runs before bootstrap/app.php, whatever the layout: Debian's app
// (artisan loads bootstrap/autoload.php) with a vendor/autoload.php that
// loads no framework beside it (what `composer require` of the bridge
// leaves), Composer's standard layout, and an artisan whose own statements
// the config depends on.
func TestConfigReaderBootsAsArtisanDoes(t *testing.T) {
	needPHP(t)
	environ := []string{"PATH=" + os.Getenv("PATH")}
	cases := []struct {
		name  string
		setup func(t *testing.T, app string)
		table string
	}{
		{"custom autoloader, stray vendor/autoload.php", func(t *testing.T, app string) { phptest.StrayVendorAutoload(t, app) }, "jobs"},
		{"composer layout", func(t *testing.T, app string) { phptest.ComposerLayout(t, app) }, "jobs"},
		{"artisan's own statements run", func(t *testing.T, app string) {
			editFile(t, filepath.Join(app, "artisan"), "define('LARAVEL_START', microtime(true));",
				"define('LARAVEL_START', microtime(true));\ndefine('SHOP_JOBS_TABLE', 'jobs_from_artisan');")
			editFile(t, filepath.Join(app, "config", "queue.php"), "'table' => 'jobs',",
				"'table' => defined('SHOP_JOBS_TABLE') ? SHOP_JOBS_TABLE : 'jobs',")
		}, "jobs_from_artisan"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			app := laravel8App(t)
			c.setup(t, app)
			cfg, info, err := Load(context.Background(), Options{AppDir: app, Environ: environ})
			if err != nil {
				t.Fatal(err)
			}
			if info.Source != "php" || !strings.HasPrefix(info.Version, "8.83.") || cfg.JobsTable != c.table || cfg.RetryAfter != 300 {
				t.Errorf("source %s, version %s, table %s, retry_after %d", info.Source, info.Version, cfg.JobsTable, cfg.RetryAfter)
			}
		})
	}
}

// TestConfigReaderNamesWhatArtisanLacks: an artisan the reader cannot
// follow, or whose autoloader is missing, is an error that names it.
func TestConfigReaderNamesWhatArtisanLacks(t *testing.T) {
	needPHP(t)
	environ := []string{"PATH=" + os.Getenv("PATH")}
	cases := []struct {
		name    string
		artisan string
		want    string
	}{
		{"no composer install", "#!/usr/bin/env php\n<?php\n\nrequire __DIR__.'/vendor/autoload.php';\n$app = require_once __DIR__.'/bootstrap/app.php';\n",
			"vendor/autoload.php, which does not exist (run composer install)"},
		{"bootstrap in a block", "<?php\nif (PHP_SAPI === 'cli') {\n    require __DIR__.'/bootstrap/autoload.php';\n    $app = require __DIR__.'/bootstrap/app.php';\n}\n",
			"requires bootstrap/app.php inside a block"},
		{"no bootstrap", "<?php\nrequire __DIR__.'/bootstrap/autoload.php';\n",
			"never requires bootstrap/app.php"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			app := laravel8App(t)
			writeFile(t, filepath.Join(app, "artisan"), c.artisan)
			_, _, err := Load(context.Background(), Options{AppDir: app, Environ: environ})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--php off") {
				t.Fatalf("err %v, want it to say %q", err, c.want)
			}
		})
	}
}
