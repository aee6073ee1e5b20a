package sqldb

import "testing"

func TestLockForPopping(t *testing.T) {
	cases := []struct {
		engine, version, override, want string
	}{
		// Every case of MySqlGrammar/PostgresGrammar's lock choice
		// (DatabaseQueue::getLockForPopping).
		{"mysql", "8.0.0", "", LockForUpdate},
		{"mysql", "8.0.1", "", LockSkipLocked},
		{"mysql", "8.0.35-0ubuntu0.22.04.1", "", LockSkipLocked},
		{"mysql", "9.1.0", "", LockSkipLocked},
		{"mysql", "5.7.44-log", "", LockForUpdate},
		{"mysql", "8.0.mysql_aurora.3.04.0", "", LockForUpdate},
		{"mysql", "5.5.5-10.5.21-MariaDB", "", LockForUpdate},
		{"mysql", "10.11.6-MariaDB", "", LockSkipLocked},
		{"mysql", "8.0.23-vitess", "", LockForUpdate},
		{"mysql", "8.0.23-PlanetScale", "", LockForUpdate},
		{"mysql", "8.0.30-Vitess", "", LockSkipLocked},
		{"pgsql", "16.2 (Debian 16.2-1.pgdg120+2)", "", LockSkipLocked},
		{"pgsql", "9.4.26", "", LockForUpdate},
		// More.
		{"mysql", "5.5.5-10.6.12-MariaDB-1:10.6.12+maria~ubu2004", "", LockSkipLocked},
		{"mysql", "11.4.2-MariaDB-ubu2404", "", LockSkipLocked},
		{"mysql", "10.5.99-MariaDB", "", LockForUpdate},
		{"mysql", "10.6.0-MariaDB", "", LockSkipLocked},
		{"mysql", "10.11.19-MariaDB-0+deb12u1", "", LockSkipLocked},
		{"mysql", "10.11.6-mariadb", "", LockSkipLocked}, // lower case: plain mysql 10.11 >= 8.0.1
		{"mysql", "19.0.0-vitess", "", LockSkipLocked},
		{"mysql", "18.0.9-vitess", "", LockForUpdate},
		{"mysql", "8.0.0-vitess", "", LockForUpdate},
		{"mysql", "8.0.1", "8.0.0", LockForUpdate},           // override wins
		{"mysql", "5.7.0", "8.0.1", LockSkipLocked},          // override wins
		{"mysql", "8.0.36", "10.5.0-MariaDB", LockForUpdate}, // override parsed like a server string
		{"mariadb", "10.11.19-MariaDB-0+deb12u1", "", LockSkipLocked},
		{"pgsql", "9.5", "", LockSkipLocked},
		{"pgsql", "9.5.0", "", LockSkipLocked},
		{"pgsql", "15.20 (Debian 15.20-0+deb12u1)", "", LockSkipLocked},
		{"pgsql", "9.4", "", LockForUpdate},
		{"sqlite", "3.46.0", "", ""},
		{"sqlite", "", "", ""},
		{"mysql", "", "", LockForUpdate},
	}
	for _, c := range cases {
		if got := LockForPopping(c.engine, c.version, c.override); got != c.want {
			t.Errorf("LockForPopping(%q, %q, %q) = %q, want %q", c.engine, c.version, c.override, got, c.want)
		}
	}
}
