package console

import (
	"github.com/laraworker/laraworker/fleet"
	"github.com/urfave/cli/v2"
)

func tablesCommand() *cli.Command {
	return &cli.Command{
		Name:  "tables",
		Usage: "create the jobs, failed_jobs and job_batches tables in the shapes of Laravel's migrations, and laraworker's own tables",
		Description: `Tables that already exist are left as they are. Names come from --table,
--failed-table and --batches-table (or DB_QUEUE_TABLE, QUEUE_FAILED_TABLE,
QUEUE_BATCHES_TABLE). laraworker's own tables (laraworker_workers,
laraworker_pauses, laraworker_history: the dashboard's fleet, pause requests
and job history) are created beside them.`,
		Flags: adminFlags(),
		Action: noArgs(func(c *cli.Context) error {
			s, err := openSession(c)
			if err != nil {
				return err
			}
			defer s.Close()
			if err := s.q.CreateTables(c.Context); err != nil {
				return s.fail(err)
			}
			// laraworker's own tables (the dashboard's fleet, pauses and
			// history) beside Laravel's; Laravel's are never altered.
			own := fleet.ForQueue(s.q)
			if err := own.CreateTables(c.Context); err != nil {
				return s.fail(err)
			}
			ot := own.Tables()
			cfg := s.cfg
			if c.Bool("json") {
				return writeJSON(c.App.Writer, map[string]string{
					"jobs": cfg.JobsTable, "failed": cfg.FailedTable, "batches": cfg.BatchesTable,
					"workers": ot.Workers, "pauses": ot.Pauses, "history": ot.History,
				})
			}
			say(c, "Tables [%s], [%s] and [%s] are ready.", cfg.JobsTable, cfg.FailedTable, cfg.BatchesTable)
			say(c, "laraworker's tables [%s], [%s] and [%s] are ready.", ot.Workers, ot.Pauses, ot.History)
			return nil
		}),
	}
}
