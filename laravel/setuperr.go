package laravel

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// Errors that come from the app's setup rather than from a job or a
// passing fault: the queue's operations wrap the driver's error with one
// of these, so a worker can stop burning jobs and say what to fix.
var (
	// ErrMissingTable: a queue table (or one of its columns) does not
	// exist.
	ErrMissingTable = errors.New("laravel: a queue table or column is missing")
	// ErrPermissionDenied: the database user may not read or write a
	// queue table.
	ErrPermissionDenied = errors.New("laravel: the database user lacks a permission on a queue table")
)

// explainSetup wraps err with ErrMissingTable or ErrPermissionDenied when
// the server says so; other errors come back unchanged.
func explainSetup(d Dialect, err error) error {
	if err == nil {
		return nil
	}
	switch setupProblem(d, err) {
	case ErrMissingTable:
		return fmt.Errorf("%w (%w)", err, ErrMissingTable)
	case ErrPermissionDenied:
		return fmt.Errorf("%w (%w)", err, ErrPermissionDenied)
	}
	return err
}

func setupProblem(d Dialect, err error) error {
	if errors.Is(err, ErrMissingTable) || errors.Is(err, ErrPermissionDenied) {
		return nil // already explained
	}
	switch d.Name() {
	case EngineMySQL:
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			switch me.Number {
			case 1146, 1054: // ER_NO_SUCH_TABLE, ER_BAD_FIELD_ERROR
				return ErrMissingTable
			case 1142, 1143, 1044, 1227: // table, column, database access denied; specific privilege
				return ErrPermissionDenied
			}
		}
	case EnginePgSQL:
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			switch pe.Code {
			case "42P01", "42703": // undefined_table, undefined_column
				return ErrMissingTable
			case "42501": // insufficient_privilege
				return ErrPermissionDenied
			}
		}
	case EngineSQLite:
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
