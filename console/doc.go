// Package console is laraworker's command line: artisan-like commands over
// the payload, laravel and worker packages. A program that registers its own
// handlers builds the same CLI with New and runs it.
package console
