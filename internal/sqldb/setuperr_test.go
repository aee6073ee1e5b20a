package sqldb

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/laravel/appconfig"
)

// TestSetupErrorsNameTheStoresContract: a statement on a missing table
// fails with this package's ErrMissingTable and, when the store gave its
// own (as package store/database gives jobqueue's), with that one too,
// in the store's words; without one, in this package's.
func TestSetupErrorsNameTheStoresContract(t *testing.T) {
	contract := errors.New("contract: a queue table or column is missing")
	for _, tc := range []struct {
		name  string
		setup SetupErrors
		text  string
	}{
		{"own", SetupErrors{}, ErrMissingTable.Error()},
		{"store's", SetupErrors{MissingTable: contract}, contract.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := Open(ctx, appconfig.Config{Driver: appconfig.EngineSQLite, Database: filepath.Join(t.TempDir(), "db.sqlite")},
				Options{Setup: tc.setup})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			err = db.Retrying(ctx, func(int) error {
				_, err := db.Pool.ExecContext(ctx, "delete from jobs")
				return err
			})
			if !errors.Is(err, ErrMissingTable) || errors.Is(err, ErrPermissionDenied) {
				t.Fatalf("delete from a missing table: %v, want ErrMissingTable", err)
			}
			if tc.setup.MissingTable != nil && !errors.Is(err, contract) {
				t.Fatalf("delete from a missing table: %v, want the store's error too", err)
			}
			if !strings.HasSuffix(err.Error(), "("+tc.text+")") || !strings.Contains(err.Error(), "no such table") {
				t.Fatalf("error text %q, want the driver's message, then (%s)", err, tc.text)
			}
			if again := db.ExplainSetup(err); again != err {
				t.Fatalf("explained twice: %v", again)
			}
		})
	}
}
