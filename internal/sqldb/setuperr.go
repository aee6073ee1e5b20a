package sqldb

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"

	"github.com/laraworker/laraworker/laravel/appconfig"
)

// Errors that come from the app's setup rather than from a statement or a
// passing fault (ExplainSetup).
var (
	// ErrMissingTable: a table (or one of its columns) does not exist.
	ErrMissingTable = errors.New("sqldb: a table or column is missing")
	// ErrPermissionDenied: the database user may not read or write a
	// table.
	ErrPermissionDenied = errors.New("sqldb: the database user lacks a permission on a table")
)

// SetupErrors are the errors a store names setup problems with: its
// contract's (package store/database passes jobqueue.ErrMissingTable and
// jobqueue.ErrPermissionDenied), so that a worker on any store recognises
// them while this package, the lowest SQL layer, imports no vocabulary.
// An error ExplainSetup wraps matches both this package's error and the
// store's (errors.Is); its text is the store's. Nil fields are this
// package's own errors.
type SetupErrors struct {
	MissingTable, PermissionDenied error
}

// ExplainSetup wraps err with the setup error its cause is when the
// server says so (ErrMissingTable, ErrPermissionDenied, and the store's
// SetupErrors); other errors come back unchanged.
func (db *DB) ExplainSetup(err error) error {
	if err == nil {
		return nil
	}
	switch SetupProblem(db.Dialect, err) {
	case ErrMissingTable:
		return fmt.Errorf("%w (%w)", err, setupError{own: ErrMissingTable, as: db.setup.MissingTable})
	case ErrPermissionDenied:
		return fmt.Errorf("%w (%w)", err, setupError{own: ErrPermissionDenied, as: db.setup.PermissionDenied})
	}
	return err
}

// setupError is a setup problem as this package and the store name it.
type setupError struct{ own, as error }

func (e setupError) Error() string {
	if e.as == nil {
		return e.own.Error()
	}
	return e.as.Error()
}

func (e setupError) Unwrap() []error {
	if e.as == nil {
		return []error{e.own}
	}
	return []error{e.as, e.own}
}

// SetupProblem is ErrMissingTable or ErrPermissionDenied when the server's
// error says the app's setup causes err, nil otherwise (and for an error
// ExplainSetup already wrapped).
func SetupProblem(d Dialect, err error) error {
	if errors.Is(err, ErrMissingTable) || errors.Is(err, ErrPermissionDenied) {
		return nil // already explained
	}
	switch d.Name() {
	case appconfig.EngineMySQL:
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			switch me.Number {
			case 1146, 1054: // ER_NO_SUCH_TABLE, ER_BAD_FIELD_ERROR
				return ErrMissingTable
			case 1142, 1143, 1044, 1227: // table, column, database access denied; specific privilege
				return ErrPermissionDenied
			}
		}
	case appconfig.EnginePgSQL:
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			switch pe.Code {
			case "42P01", "42703": // undefined_table, undefined_column
				return ErrMissingTable
			case "42501": // insufficient_privilege
				return ErrPermissionDenied
			}
		}
	case appconfig.EngineSQLite:
		var se *sqlite.Error
		if errors.As(err, &se) {
			msg := se.Error()
			switch {
			case strings.Contains(msg, "no such table"), strings.Contains(msg, "no such column"):
				return ErrMissingTable
			case se.Code()&0xff == 8: // SQLITE_READONLY
				return ErrPermissionDenied
			}
		}
	}
	return nil
}
