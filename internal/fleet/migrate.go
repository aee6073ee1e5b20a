package fleet

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Tables an earlier version created lack the columns added since:
// CreateTables (`laraworker tables`) adds them. Until then writers and
// readers look for them (TimingColumns) and leave them out, so a worker
// of this version on tables of an earlier one goes on recording jobs done,
// failed and released.

// columnsOf lists the columns of table.
func (s *Store) columnsOf(ctx context.Context, table string) (map[string]bool, error) {
	var query string
	switch s.d.Name() {
	case "mysql":
		query = "select column_name from information_schema.columns where table_schema = database() and table_name = ?"
	case "pgsql":
		query = "select column_name from information_schema.columns where table_schema = current_schema() and table_name = ?"
	default:
		query = "select name from pragma_table_info(?)"
	}
	rows, err := s.db.QueryContext(ctx, s.d.Rebind(query), table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out[strings.ToLower(name)] = true
	}
	return out, rows.Err()
}

// missing lists the columns of want that table lacks.
func (s *Store) missing(ctx context.Context, table string, want []string) ([]string, error) {
	have, err := s.columnsOf(ctx, table)
	if err != nil {
		return nil, err
	}
	if len(have) == 0 {
		return nil, fmt.Errorf("table %s does not exist (run `laraworker tables`)", table)
	}
	var out []string
	for _, c := range want {
		if !have[c] {
			out = append(out, c)
		}
	}
	return out, nil
}

// addMissingColumns adds the columns of want that table lacks, as
// "bigint not null default 0". Two processes doing it at once is fine: a
// failure is ignored when the columns are there afterwards.
func (s *Store) addMissingColumns(ctx context.Context, table string, want []string) error {
	cols, err := s.missing(ctx, table, want)
	if err != nil || len(cols) == 0 {
		return err
	}
	adds := make([]string, len(cols))
	for i, c := range cols {
		adds[i] = "add column " + s.d.Quote(c) + " " + typesFor(s.d.Name()).bigint + " not null default 0"
	}
	var stmts []string
	if s.d.Name() == "sqlite" { // one column per statement
		for _, a := range adds {
			stmts = append(stmts, "alter table "+s.d.Quote(table)+" "+a)
		}
	} else {
		stmts = []string{"alter table " + s.d.Quote(table) + " " + strings.Join(adds, ", ")}
	}
	for _, stmt := range stmts {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			if left, err2 := s.missing(ctx, table, want); err2 == nil && len(left) == 0 {
				return nil
			}
			return err
		}
	}
	return nil
}

// schemaCache remembers whether the history has the timing columns and
// the workers table the given-back count, for a minute: a worker started
// before `laraworker tables` added them starts writing them within a
// minute, without a restart.
type schemaCache struct {
	mu       sync.Mutex
	checked  time.Time
	timings  bool
	returned bool
}

// returnedColumn is the workers' count of jobs given back untouched to
// PHP workers (added after the table's first version).
const returnedColumn = "jobs_returned"

const schemaRecheck = time.Minute

func (c *schemaCache) forget() {
	c.mu.Lock()
	c.checked = time.Time{}
	c.mu.Unlock()
}

// TimingColumns reports whether the history table has the runtime and
// wait columns (`laraworker tables` adds them to an earlier version's).
func (s *Store) TimingColumns(ctx context.Context) (bool, error) {
	if err := s.checkSchema(ctx); err != nil {
		return false, err
	}
	s.schema.mu.Lock()
	defer s.schema.mu.Unlock()
	return s.schema.timings, nil
}

// ReturnedColumn reports whether the workers table has the count of jobs
// given back to PHP workers (`laraworker tables`, or a worker's start,
// adds it to an earlier version's).
func (s *Store) ReturnedColumn(ctx context.Context) (bool, error) {
	if err := s.checkSchema(ctx); err != nil {
		return false, err
	}
	s.schema.mu.Lock()
	defer s.schema.mu.Unlock()
	return s.schema.returned, nil
}

// checkSchema reads which of the later columns the tables have, at most
// once a minute.
func (s *Store) checkSchema(ctx context.Context) error {
	s.schema.mu.Lock()
	defer s.schema.mu.Unlock()
	if !s.schema.checked.IsZero() && time.Since(s.schema.checked) < schemaRecheck {
		return nil
	}
	timing, err := s.missing(ctx, s.t.History, timingColumns)
	if err != nil {
		return err
	}
	returned, err := s.missing(ctx, s.t.Workers, []string{returnedColumn})
	if err != nil {
		return err
	}
	s.schema.timings, s.schema.returned, s.schema.checked = len(timing) == 0, len(returned) == 0, time.Now()
	return nil
}
