package fleet

import (
	"context"
	"fmt"
	"strings"
)

// ClassStats are the jobs of one queue and class the workers finished
// over a span of minutes, with their runtimes and waits.
type ClassStats struct {
	Queue, Class           string
	Done, Failed, Released int64
	Run, Wait              Histogram
	// Timed is false when the history has no timing columns yet (an
	// earlier version's table: `laraworker tables` adds them).
	Timed bool
}

// Jobs is how many jobs the workers finished, whatever the outcome.
func (c ClassStats) Jobs() int64 { return c.Done + c.Failed + c.Released }

// ClassStats adds up the history of the minutes >= since per queue and
// class: one grouped read of the primary key's minute range.
func (s *Store) ClassStats(ctx context.Context, since int64) ([]ClassStats, error) {
	timed, err := s.TimingColumns(ctx)
	if err != nil {
		return nil, err
	}
	q := s.d.Quote
	sums := []string{"done", "failed", "released"}
	if timed {
		sums = append(sums, timingColumns...)
	}
	exprs := make([]string, len(sums))
	for i, c := range sums {
		exprs[i] = "sum(" + q(c) + ")"
	}
	rows, err := s.db.QueryContext(ctx, s.d.Rebind(fmt.Sprintf("select %s, %s, %s from %s where %s >= ? group by %s, %s order by %s, %s",
		q("queue"), q("class"), strings.Join(exprs, ", "), q(s.t.History), q("minute"), q("queue"), q("class"), q("queue"), q("class"))), since)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ClassStats
	vals := make([]int64, len(sums))
	for rows.Next() {
		c := ClassStats{Timed: timed}
		dest := []any{&c.Queue, &c.Class}
		for i := range vals {
			dest = append(dest, &vals[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		c.Done, c.Failed, c.Released = vals[0], vals[1], vals[2]
		if timed {
			scanTiming(vals[3:], &c.Run, &c.Wait)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
