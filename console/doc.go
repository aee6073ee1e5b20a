// Package console is laraworker's command line: artisan-like commands over
// the payload, appconfig, jobqueue and worker packages. A command reaches a
// queue only through a connection (package console/internal/queueconn):
// the jobqueue contract of the store that queueconn.Open picks by the
// served queue connection's driver. A program that registers
// its own handlers builds the same CLI with New and runs it.
package console
