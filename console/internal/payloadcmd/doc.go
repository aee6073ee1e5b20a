// Package payloadcmd holds the commands that write and read job payloads:
// push (a job as PHP's dispatch() writes it, for the app's Laravel
// version) and inspect (a payload, a serialized value or a queued job,
// decoded to JSON), with the class file both read to know what the
// command line cannot say of a PHP class (classfile.go).
package payloadcmd
