package queueconn

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/internal/didyoumean"
	"github.com/laraworker/laraworker/internal/redact"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/urfave/cli/v2"
)

// LoadAppConfig reads the app's configuration in appconfig.Load's order:
// flags (overrides, by .env name, with --key-file and --cipher) first, then
// LARAWORKER_* variables, the app's config through its PHP (else its
// files), the .env and the environment, the version's and Laravel's
// defaults.
func LoadAppConfig(c *cli.Context, overrides map[string]string) (appconfig.Config, appconfig.AppInfo, error) {
	cfg, info, err := loadAppConfig(c, overrides)
	if err == nil {
		err = appFound(cfg, info)
	}
	if err == nil {
		err = ConnectionConfigured(info)
	}
	return cfg, info, err
}

// loadAppConfig is LoadAppConfig without its checks of the database and
// the connection: what a command that needs only the app's key reads.
func loadAppConfig(c *cli.Context, overrides map[string]string) (appconfig.Config, appconfig.AppInfo, error) {
	if overrides == nil {
		overrides = map[string]string{}
	}
	if file := c.String("key-file"); file != "" {
		key, err := readKeyFile(file)
		if err != nil {
			return appconfig.Config{}, appconfig.AppInfo{}, err
		}
		overrides["APP_KEY"] = key
	}
	if ci := c.String("cipher"); ci != "" {
		overrides["APP_CIPHER"] = ci
	}
	cfg, info, err := appconfig.Load(c.Context, appconfig.Options{
		AppDir:     c.String("app"),
		EnvFile:    c.String("env"),
		PHP:        c.String("php"),
		Connection: c.String("connection"),
		Overrides:  overrides,
	})
	output.Secrets(c.App).Add(appconfig.SecretValues(cfg, info)...)
	return cfg, info, err
}

// ConnectionConfigured refuses a queue connection the app's
// config/queue.php does not define, as artisan does (`php artisan
// queue:work nosuch`: "The [nosuch] queue connection has not been
// configured."), instead of serving the jobs table with defaults that are
// not the app's (retry_after 60 where the app says 90). Without the app's
// config (only a .env) there is nothing to check.
func ConnectionConfigured(info appconfig.AppInfo) error {
	if info.QueueConnections == nil || info.Connection == "" {
		return nil
	}
	if _, ok := info.QueueConnections[info.Connection]; ok {
		return nil
	}
	names := make([]string, 0, len(info.QueueConnections))
	for n := range info.QueueConnections {
		names = append(names, n)
	}
	sort.Strings(names)
	msg := fmt.Sprintf("the [%s] queue connection has not been configured: queue connection %q (%s) is not in the app's config/queue.php, which has %s",
		info.Connection, info.Connection, info.ConnectionFrom, strings.Join(names, ", "))
	if s, ok := didyoumean.Suggest(info.Connection, names, nil); ok {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return errors.New(msg)
}

// defaultSQLite is the database Laravel's defaults leave when nothing
// names one.
var defaultSQLite = appconfig.Config{}.WithDefaults().Database

// appFound refuses to go on when nothing said where the app is: no .env
// here, no --app or --env, no database named by a variable or a flag, and
// the one that leaves (Laravel's default SQLite file) does not exist. Opening it would fail with SQLite's
// "unable to open database file", or create an empty file in the current
// folder, neither of which says what is wrong.
func appFound(cfg appconfig.Config, info appconfig.AppInfo) error {
	if info.EnvFile != "" || info.AppDir != "" || cfg.Driver != appconfig.EngineSQLite || cfg.Database != defaultSQLite {
		return nil // an app, a .env, or a database named by a variable or flag
	}
	if _, err := os.Stat(cfg.Database); err == nil {
		return nil
	}
	here, _ := os.Getwd()
	return fmt.Errorf("no .env in %s and no --app or --env: laraworker reads the app's database from its .env (or its config, with --app); "+
		"run it in the app's folder, or pass --app DIR (the folder holding artisan) or --env FILE, or set DB_CONNECTION and the DB_* variables "+
		"(without them it looked for SQLite's %s, which does not exist)", here, cfg.Database)
}

// readKeyFile reads an APP_KEY from a file: the key alone on its first
// line (base64:...), or a .env holding APP_KEY=. Its content never appears
// in errors.
func readKeyFile(path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--key-file: %w", err)
	}
	text := strings.TrimSpace(string(raw))
	if strings.Contains(text, "APP_KEY=") {
		vals, err := appconfig.ParseDotenv(text, func(string) (string, bool) { return "", false })
		if err != nil {
			return "", fmt.Errorf("--key-file %s: %w", path, err)
		}
		text = vals["APP_KEY"]
	} else if first, _, _ := strings.Cut(text, "\n"); first != text {
		text = strings.TrimSpace(first)
	}
	if text == "" {
		return "", fmt.Errorf("--key-file %s: no APP_KEY in it", path)
	}
	return text, nil
}

// LoadConfig reads the app's configuration (see LoadAppConfig), with flag
// overrides keyed by their .env names.
func LoadConfig(c *cli.Context, overrides map[string]string) (appconfig.Config, error) {
	cfg, _, err := LoadAppConfig(c, overrides)
	return cfg, err
}

// EncrypterFromFlags returns nil (and no error) when no key is configured:
// plain commands need none, encrypted ones then fail with ErrEncrypted.
// It reads the key only (--key-file, APP_KEY, the .env, the app's config):
// no database need be named, nor a .env be here.
func EncrypterFromFlags(c *cli.Context) (*payload.Encrypter, error) {
	cfg, _, err := loadAppConfig(c, nil)
	if err != nil {
		return nil, err
	}
	return Encrypter(cfg)
}

// Encrypter is the app's encrypter (APP_KEY, APP_PREVIOUS_KEYS,
// APP_CIPHER); nil when no key is configured.
func Encrypter(cfg appconfig.Config) (*payload.Encrypter, error) {
	if !cfg.AppKey.IsSet() {
		return nil, nil
	}
	key, err := payload.ParseKey(cfg.AppKey.Reveal())
	if err != nil {
		return nil, err
	}
	var previous [][]byte
	for _, pk := range cfg.AppPreviousKeys {
		k, err := payload.ParseKey(pk.Reveal())
		if err != nil {
			return nil, err
		}
		previous = append(previous, k)
	}
	cipher := cfg.AppCipher
	if cipher == "" {
		cipher = "AES-256-CBC"
	}
	return payload.NewEncrypter(key, cipher, previous...)
}

// ErrorLine is msg on one line with every secret of cfg (DB and Redis
// passwords, APP_KEY, APP_PREVIOUS_KEYS) replaced by "[redacted]", in any
// escaping (package redact).
func ErrorLine(cfg appconfig.Config, msg string) string {
	return output.OneLine(redact.New(appconfig.SecretValues(cfg, appconfig.AppInfo{})...).String(msg))
}
