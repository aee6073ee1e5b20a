package queueconn

import (
	"errors"
	"fmt"
	"strings"

	"github.com/laraworker/laraworker/jobqueue"
)

// MissingTablesError is the error for queue tables that do not exist.
func MissingTablesError(missing []jobqueue.MissingTable) error {
	parts := make([]string, len(missing))
	queueTables := false
	for i, m := range missing {
		parts[i] = m.String()
		queueTables = queueTables || m.Role != "cache"
	}
	if !queueTables {
		// The app's cache table is its own migration's: --create-tables
		// makes only the queue's tables.
		return errors.New(strings.Join(parts, "; "))
	}
	return fmt.Errorf("%s (laraworker work --create-tables creates the queue's tables too)", strings.Join(parts, "; "))
}
