// Package appconfig reads a Laravel app's configuration as Laravel
// resolves it: through the app's own PHP (php/read-config.php boots the
// app the way `php artisan` does), else from the .env, the config files Go
// can evaluate safely and the defaults of the app's Laravel version
// (detected from vendor/ or composer.lock). Load is the one entry point;
// its comment gives the order in which the sources win.
//
// The result, Config, is what the stores need: the database connection,
// the queue connection and its tables, the cache store, the Redis
// connection, the APP_KEY. Its zero value is usable: WithDefaults fills in
// Laravel's defaults. Secrets are of type Secret, which never prints its
// value.
//
// It imports no database driver: a handler that reads Job.App().Config
// links none.
package appconfig
