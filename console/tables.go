package console

import (
	"github.com/urfave/cli/v2"
)

func tablesCommand() *cli.Command {
	return &cli.Command{
		Name:  "tables",
		Usage: "create the jobs, failed_jobs and job_batches tables in the shapes of Laravel's migrations",
		Description: `Tables that already exist are left as they are. Names come from --table,
--failed-table and --batches-table (or DB_QUEUE_TABLE, QUEUE_FAILED_TABLE,
QUEUE_BATCHES_TABLE).`,
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
			cfg := s.cfg
			if c.Bool("json") {
				return writeJSON(c.App.Writer, map[string]string{
					"jobs": cfg.JobsTable, "failed": cfg.FailedTable, "batches": cfg.BatchesTable,
				})
			}
			say(c, "Tables [%s], [%s] and [%s] are ready.", cfg.JobsTable, cfg.FailedTable, cfg.BatchesTable)
			return nil
		}),
	}
}
