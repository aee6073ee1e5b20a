package admincmd_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console/internal/clitest"
	_ "modernc.org/sqlite"
)

// TestTablesFollowTheAppsLaravelVersion: `laraworker tables` on an app
// makes the tables its Laravel version's stubs make: on 13.26 (read from
// its composer.lock) failed_jobs has varchar connection and queue and the
// (connection, queue, failed_at) index; on 12.67 text columns and no such
// index.
func TestTablesFollowTheAppsLaravelVersion(t *testing.T) {
	for _, c := range []struct {
		version  string
		indexed  bool
		connType string
	}{
		{"v13.26.1", true, "varchar"},
		{"v12.67.0", false, "text"},
	} {
		t.Run(c.version, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "database.sqlite")
			files := map[string]string{
				"artisan":         "<?php\n",
				"composer.lock":   `{"packages":[{"name":"laravel/framework","version":"` + c.version + `"}]}`,
				".env":            "APP_ENV=testing\nDB_CONNECTION=sqlite\nDB_DATABASE=" + db + "\nQUEUE_CONNECTION=database\n",
				"database.sqlite": "",
			}
			for name, body := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if out, errOut, code := clitest.RunStdin(t, "", "tables", "--app", dir, "--php", "off"); code != 0 {
				t.Fatalf("tables: exit %d\n%s\n%s", code, out, errOut)
			}
			conn, err := sql.Open("sqlite", db)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var ddl string
			if err := conn.QueryRow(`select group_concat(sql, ';') from sqlite_master where tbl_name = 'failed_jobs'`).Scan(&ddl); err != nil {
				t.Fatal(err)
			}
			indexed := strings.Contains(ddl, `"failed_jobs_connection_queue_failed_at_index"`)
			if indexed != c.indexed || !strings.Contains(ddl, `"connection" `+c.connType+` not null`) {
				t.Fatalf("failed_jobs of a Laravel %s app:\n%s", c.version, ddl)
			}
		})
	}
}
