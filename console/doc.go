// Package console is laraworker's command line: artisan-like commands over
// the payload, appconfig, jobqueue and worker packages. A command reaches a
// queue only through a connection (connection.go): the jobqueue contract
// and capabilities of the store that openConnection picks by the served
// queue connection's driver (dbconnection.go for Laravel's database
// queue). A program that registers its own handlers builds the same CLI
// with New and runs it.
package console
