package console

import (
	"github.com/laraworker/laraworker/laravel"
	"github.com/urfave/cli/v2"
)

// appFlag names the Laravel app folder whose configuration is read.
func appFlag() cli.Flag {
	return &cli.StringFlag{Name: "app", EnvVars: []string{"LARAWORKER_APP"},
		Usage: "the Laravel app's `folder` (the one holding artisan); its config is read through its own php (default: the --env folder when it holds artisan)"}
}

// phpFlag picks the php that reads the app's config, or turns it off.
func phpFlag() cli.Flag {
	return &cli.StringFlag{Name: "php", EnvVars: []string{"LARAWORKER_PHP"},
		Usage: "the `php` binary that boots the app to read its config (default: php on PATH); off: read the .env and config files without php"}
}

// loadAppConfig reads the app's configuration: through its PHP when there
// is an app and a php, else from its files; flags (overrides, by .env
// name), --key and --cipher win.
func loadAppConfig(c *cli.Context, overrides map[string]string) (laravel.Config, laravel.AppInfo, error) {
	if overrides == nil {
		overrides = map[string]string{}
	}
	if k := c.String("key"); k != "" {
		overrides["APP_KEY"] = k
	}
	if ci := c.String("cipher"); ci != "" {
		overrides["APP_CIPHER"] = ci
	}
	return laravel.LoadAppConfig(c.Context, laravel.AppOptions{
		AppDir:     c.String("app"),
		EnvFile:    c.String("env"),
		PHP:        c.String("php"),
		Connection: c.String("connection"),
		Overrides:  overrides,
	})
}
