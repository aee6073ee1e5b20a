// Package admincmd holds the commands that administer a queue
// connection, artisan's queue:* commands and laraworker's own: failed,
// retry, forget, flush, prune-failed, clear and size (admin.go, asking
// before they delete as artisan's ConfirmableTrait does: confirm.go),
// move (move.go), tables (tables.go), pause and continue (pause.go).
package admincmd
