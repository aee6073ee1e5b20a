package admincmd

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/internal/didyoumean"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/urfave/cli/v2"
)

// MoveCommand is `move`: the queued jobs of some classes moved to another
// queue.
func MoveCommand() *cli.Command {
	return &cli.Command{
		Name:      "move",
		Usage:     "move the queued jobs of some classes to another queue (the backlog when a class moves to Go)",
		ArgsUsage: "CLASS...",
		Description: `Moves the unreserved jobs (ready and delayed) of each CLASS from --from to
--to, a few hundred rows per statement. A reserved job (running, or held by a
crashed worker until retry_after) is never touched: it stays where it is and
finishes there. Run it after PHP routes new jobs of the class to --to (the
bridge, or Queue::route on Laravel 13). Prints the counts before and after.`,
		Flags: adminFlags(
			&cli.StringFlag{Name: "from", Usage: "the queue the jobs are on now (required)"},
			&cli.StringFlag{Name: "to", Usage: "the queue laraworker serves (required)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "count only, move nothing"},
		),
		Action: cmdline.Action(runMove),
	}
}

// moveRow is one class's counts, as printed.
type moveRow struct {
	Class              string `json:"class"`
	FromBefore         int64  `json:"from_unreserved_before"`
	FromReservedBefore int64  `json:"from_reserved_before"`
	ToBefore           int64  `json:"to_before"`
	Moved              int64  `json:"moved"`
	FromAfter          int64  `json:"from_unreserved_after"`
	FromReservedAfter  int64  `json:"from_reserved_after"`
	ToAfter            int64  `json:"to_after"`
}

func runMove(c *cli.Context, classes []string) error {
	from, to := c.String("from"), c.String("to")
	switch {
	case len(classes) == 0:
		return cli.Exit(`move: name the classes to move: laraworker move 'App\Jobs\X' --from default --to go`, 2)
	case from == "" || to == "":
		return cli.Exit("move: --from and --to are required", 2)
	case from == to:
		return cli.Exit(fmt.Sprintf("move: --from and --to are both %q", from), 2)
	}
	s, err := queueconn.OpenSession(c)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := checkJobsTable(c, s.Conn); err != nil {
		return s.Fail(err)
	}
	rows, err := countMove(c, s.Q, classes, from, to, nil)
	// A queue that cannot count its jobs by class (SQS) moves without
	// the counts.
	counted := !errors.Is(err, jobqueue.ErrNotSupported)
	if !counted {
		if c.Bool("dry-run") {
			return s.Fail(fmt.Errorf("%w: --dry-run has nothing to show", err))
		}
		rows = make([]moveRow, len(classes))
		for i, class := range classes {
			rows[i].Class = class
		}
	} else if err != nil {
		return s.Fail(err)
	}
	if counted {
		if err := warnAbsentClasses(c, s.Q, rows, from); err != nil {
			return s.Fail(err)
		}
	}
	if !c.Bool("dry-run") {
		moved, err := s.Q.Move(c.Context, from, to, classes)
		if err != nil {
			return s.Fail(fmt.Errorf("%w (%d jobs were moved before the error)", err, sum(moved)))
		}
		if counted {
			if rows, err = countMove(c, s.Q, classes, from, to, rows); err != nil {
				return s.Fail(err)
			}
		}
		for i := range rows {
			rows[i].Moved = moved[rows[i].Class]
		}
	}
	return printMove(c, rows, from, to)
}

// checkJobsTable: without the jobs table there is nothing to move; the
// other tables do not matter here.
func checkJobsTable(c *cli.Context, conn *queueconn.Connection) error {
	missing, err := conn.Store.MissingTables(c.Context)
	if err != nil {
		return err
	}
	if len(missing) > 0 && missing[0].Role == "jobs" {
		return queueconn.MissingTablesError(missing[:1])
	}
	return nil
}

// countMove fills the before counts (before == nil) or the after counts.
func countMove(c *cli.Context, q jobqueue.Admin, classes []string, from, to string, before []moveRow) ([]moveRow, error) {
	fromCounts, err := q.CountClasses(c.Context, from, classes)
	if err != nil {
		return nil, err
	}
	toCounts, err := q.CountClasses(c.Context, to, classes)
	if err != nil {
		return nil, err
	}
	rows := before
	if rows == nil {
		rows = make([]moveRow, len(classes))
	}
	for i, class := range classes {
		r := &rows[i]
		r.Class = class
		toTotal := toCounts[i].Unreserved + toCounts[i].Reserved
		if before == nil {
			r.FromBefore, r.FromReservedBefore, r.ToBefore = fromCounts[i].Unreserved, fromCounts[i].Reserved, toTotal
			r.FromAfter, r.FromReservedAfter, r.ToAfter = r.FromBefore, r.FromReservedBefore, r.ToBefore
			continue
		}
		r.FromAfter, r.FromReservedAfter, r.ToAfter = fromCounts[i].Unreserved, fromCounts[i].Reserved, toTotal
	}
	return rows, nil
}

// warnAbsentClasses says so on stderr when a class has no job on --from,
// with a "did you mean" from the classes that are there (when q, the
// store's class sample, is not nil).
func warnAbsentClasses(c *cli.Context, q jobqueue.Admin, rows []moveRow, from string) error {
	var present map[string]int64
	for _, r := range rows {
		if r.FromBefore+r.FromReservedBefore > 0 {
			continue
		}
		if present == nil {
			var err error
			// A store that cannot sample its queues names no suggestion.
			if present, _, err = q.ClassesOnQueues(c.Context, []string{from}, queueconn.ClassSample); err != nil && !errors.Is(err, jobqueue.ErrNotSupported) {
				return err
			}
		}
		msg := fmt.Sprintf(`move: no %s job on queue "%s"`, r.Class, from)
		if s, ok := didyoumean.Suggest(r.Class, queueconn.SortedClasses(present), didyoumean.ClassName); ok {
			msg += fmt.Sprintf(`; did you mean "%s"?`, s)
		}
		fmt.Fprintln(c.App.ErrWriter, msg)
	}
	return nil
}

func printMove(c *cli.Context, rows []moveRow, from, to string) error {
	if c.Bool("json") {
		return output.WriteJSON(c.App.Writer, map[string]any{"from": from, "to": to, "dry_run": c.Bool("dry-run"), "classes": rows})
	}
	n := strconv.FormatInt
	var table [][]string
	var moved, movable int64
	for _, r := range rows {
		table = append(table, []string{r.Class,
			n(r.FromBefore, 10) + " + " + n(r.FromReservedBefore, 10) + " reserved", n(r.ToBefore, 10),
			n(r.Moved, 10),
			n(r.FromAfter, 10) + " + " + n(r.FromReservedAfter, 10) + " reserved", n(r.ToAfter, 10)})
		moved += r.Moved
		movable += r.FromBefore
	}
	headers := []string{"Class", "On " + from + " before", "On " + to + " before", "Moved", "On " + from + " after", "On " + to + " after"}
	if err := output.WriteTable(c.App.Writer, headers, table); err != nil {
		return err
	}
	if c.Bool("dry-run") {
		output.Say(c, "Dry run: %d jobs would move from %s to %s (reserved jobs stay).", movable, from, to)
		return nil
	}
	output.Say(c, "Moved %d jobs from %s to %s.", moved, from, to)
	var left int64
	for _, r := range rows {
		left += r.FromAfter
	}
	if left > 0 {
		output.Say(c, "%d unreserved jobs of these classes are on %s again (released or pushed since the move): run move again.", left, from)
	}
	return nil
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}
