package admincmd

import (
	"context"

	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/urfave/cli/v2"
)

func tablesCommand() *cli.Command {
	return &cli.Command{
		Name:  "tables",
		Usage: "create the jobs, failed_jobs and job_batches tables in the shapes of Laravel's migrations, and laraworker's own tables",
		Description: `Tables that already exist are left as they are. Names come from --table,
--failed-table and --batches-table (or DB_QUEUE_TABLE, QUEUE_FAILED_TABLE,
QUEUE_BATCHES_TABLE). laraworker's own tables (laraworker_workers,
laraworker_pauses, laraworker_history, laraworker_recent: the dashboard's
fleet, pause requests, job history with runtimes and waits, and recent jobs)
are created beside them; the columns an earlier version's tables lack are
added (run it again after an upgrade).

--index adds the claim index to the jobs table: two indexes and, on
MySQL/MariaDB, a VIRTUAL generated column laraworker_class (the payload's
displayName). Laravel's writers and workers do not see a difference; workers
started afterwards claim through it, so PHP-only jobs and delayed jobs no
longer slow their claims, and PostgreSQL's plan no longer depends on
statistics. Jobs are then picked by (available_at, id) rather than by id
(--laravel-exact keeps Laravel's query). --drop-index removes it again.`,
		Flags: append(adminFlags(),
			&cli.BoolFlag{Name: "index", Usage: "also add the claim index (opt-in, reversible): claims then read only the ready rows of the classes laraworker takes"},
			&cli.BoolFlag{Name: "drop-index", Usage: "only remove the claim index (and its generated column on MySQL/MariaDB); nothing else is touched"},
		),
		Action: cmdline.NoArgs(runTables),
	}
}

// claimIndexer is a store with laraworker's claim index (the database
// queue): `tables --index` creates it, `--drop-index` removes it.
type claimIndexer interface {
	CreateClaimIndex(ctx context.Context) error
	DropClaimIndex(ctx context.Context) error
	ClassIndexName() string
	ClaimIndexName() string
}

func runTables(c *cli.Context) error {
	s, err := queueconn.OpenSession(c)
	if err != nil {
		return err
	}
	defer s.Close()
	own, err := s.Conn.Database("laraworker's tables")
	if err != nil {
		return s.Fail(err)
	}
	index, _ := s.Conn.Store.(claimIndexer)
	if index == nil && (c.Bool("index") || c.Bool("drop-index")) {
		return s.Fail(s.Conn.Lacks("claim index"))
	}
	if c.Bool("drop-index") {
		if err := index.DropClaimIndex(c.Context); err != nil {
			return s.Fail(err)
		}
		output.Say(c, "The claim index on [%s] is gone; workers started from now on claim with Laravel's query.", s.Cfg.JobsTable)
		return nil
	}
	if err := createAllTables(c, s.Conn, own, index); err != nil {
		return s.Fail(err)
	}
	return printTables(c, s.Cfg, own, index)
}

// createAllTables creates Laravel's queue tables and, beside them,
// laraworker's own (the dashboard's fleet, pauses and history); Laravel's
// are never altered, except by the claim index when --index asks for it.
func createAllTables(c *cli.Context, conn *queueconn.Connection, own *queueconn.QueueDatabase, index claimIndexer) error {
	if err := conn.CreateTables(c.Context); err != nil {
		return err
	}
	if err := own.Fleet.CreateTables(c.Context); err != nil {
		return err
	}
	if c.Bool("index") {
		return index.CreateClaimIndex(c.Context)
	}
	return nil
}

func printTables(c *cli.Context, cfg appconfig.Config, own *queueconn.QueueDatabase, index claimIndexer) error {
	ot := own.Fleet.Tables()
	if c.Bool("json") {
		return output.WriteJSON(c.App.Writer, map[string]string{
			"jobs": cfg.JobsTable, "failed": cfg.FailedTable, "batches": cfg.BatchesTable,
			"workers": ot.Workers, "pauses": ot.Pauses, "history": ot.History, "recent": ot.Recent,
		})
	}
	output.Say(c, "Tables [%s], [%s] and [%s] are ready.", cfg.JobsTable, cfg.FailedTable, cfg.BatchesTable)
	output.Say(c, "laraworker's tables [%s], [%s], [%s] and [%s] are ready.", ot.Workers, ot.Pauses, ot.History, ot.Recent)
	if c.Bool("index") {
		output.Say(c, "The claim index on [%s] is ready ([%s], [%s]); workers started from now on use it.", cfg.JobsTable, index.ClassIndexName(), index.ClaimIndexName())
	}
	return nil
}
