// Package cmdline is what every command of the CLI shares on its command
// line: the flags (connection, app, key, count and duration values), the
// positional arguments artisan's users write before their flags, and the
// usage errors (exit status 2, one line, a "did you mean").
package cmdline
