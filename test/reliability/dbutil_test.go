package reliability

import (
	"database/sql"
	"testing"
)

// killUserConnections kills every MariaDB connection of user and returns
// how many there were.
func killUserConnections(t *testing.T, root *sql.DB, user string) int {
	t.Helper()
	rows, err := root.Query("select id from information_schema.processlist where user = ?", user)
	if err != nil {
		t.Errorf("processlist: %v", err)
		return 0
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	rows.Close()
	n := 0
	for _, id := range ids {
		if _, err := root.Exec("kill connection ?", id); err == nil {
			n++
		}
	}
	return n
}
