// Package output prints what the commands show: tables in artisan's style,
// JSON for scripts, one-line messages on stdout and stderr, and the logs
// (JSON, or text on a terminal). Text read from a queue is shown escaped,
// so it cannot drive the terminal.
package output
