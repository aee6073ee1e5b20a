package sqldb

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/jobqueue"
)

// The setup errors are the contract's (jobqueue.ErrMissingTable,
// jobqueue.ErrPermissionDenied), so a worker on any store recognises them.
var (
	ErrMissingTable     = jobqueue.ErrMissingTable
	ErrPermissionDenied = jobqueue.ErrPermissionDenied
)

// ExplainSetup wraps err with ErrMissingTable or ErrPermissionDenied when
// the server says so; other errors come back unchanged.
func ExplainSetup(d Dialect, err error) error {
	if err == nil {
		return nil
	}
	switch SetupProblem(d, err) {
	case ErrMissingTable:
		return fmt.Errorf("%w (%w)", err, ErrMissingTable)
	case ErrPermissionDenied:
		return fmt.Errorf("%w (%w)", err, ErrPermissionDenied)
	}
	return err
}

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
