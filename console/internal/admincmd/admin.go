package admincmd

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/queuepause"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/urfave/cli/v2"
)

// The commands of this file mirror artisan's queue:failed, queue:retry,
// queue:forget, queue:flush, queue:prune-failed and queue:clear (names,
// arguments and messages of Laravel 8.x), plus size. Each one also takes
// --json. Errors are one line on stderr and exit status 1.

// Commands are artisan's queue:failed, queue:retry, queue:forget,
// queue:flush, queue:prune-failed and queue:clear, size, tables, pause and
// continue, in the order --help lists them.
func Commands() []*cli.Command {
	return []*cli.Command{
		failedCommand(), retryCommand(), forgetCommand(), flushCommand(),
		pruneFailedCommand(), clearCommand(), sizeCommand(), tablesCommand(),
		pauseCommand(), continueCommand(),
	}
}

func adminFlags(extra ...cli.Flag) []cli.Flag {
	return append(append(cmdline.ConnectionFlags(), cmdline.JSONFlag()), extra...)
}

func failedCommand() *cli.Command {
	return &cli.Command{
		Name:  "failed",
		Usage: "list failed jobs, newest first, like `php artisan queue:failed`",
		Flags: adminFlags(&cli.StringFlag{Name: "queue", Usage: "only failed jobs of this queue"}),
		Action: cmdline.NoArgs(func(c *cli.Context) error {
			s, err := queueconn.OpenSession(c)
			if err != nil {
				return err
			}
			defer s.Close()
			failed, err := s.Q.ListFailed(c.Context, c.String("queue"))
			if err != nil {
				return s.Fail(err)
			}
			return printFailed(c, failed)
		}),
	}
}

// failedJSON is one failed job in --json output. Keys are snake_case on
// every command, as failed_jobs' columns are.
type failedJSON struct {
	ID         int64  `json:"id"`
	UUID       string `json:"uuid"`
	Connection string `json:"connection"`
	Queue      string `json:"queue"`
	Class      string `json:"class"`
	FailedAt   string `json:"failed_at"`
	Exception  string `json:"exception"`
	// Deprecated: failed_at's former name, kept for one release.
	FailedAtOld string `json:"failedAt"`
}

func printFailed(c *cli.Context, failed []jobqueue.FailedJob) error {
	if c.Bool("json") {
		// An exception text may quote a password (a driver's message): the
		// app's secrets are redacted from it, as from the logs.
		secrets := output.Secrets(c.App)
		out := make([]failedJSON, 0, len(failed))
		for _, f := range failed {
			out = append(out, failedJSON{f.ID, f.UUID, f.Connection, f.Queue, f.Class, f.FailedAt, secrets.String(f.Exception), f.FailedAt})
		}
		return output.WriteJSON(c.App.Writer, out)
	}
	if len(failed) == 0 {
		output.Say(c, "No failed jobs!")
		return nil
	}
	rows := make([][]string, 0, len(failed))
	for _, f := range failed {
		// The database-uuids failer (Laravel's default) shows the uuid as ID.
		rows = append(rows, []string{f.UUID, f.Connection, f.Queue, f.Class, f.FailedAt})
	}
	return output.WriteTable(c.App.Writer, []string{"ID", "Connection", "Queue", "Class", "Failed At"}, rows)
}

const retryHelp = `Each failed job is pushed back as a new jobs row (attempts 0, available now,
same uuid and queue) and then removed from failed_jobs, as queue:retry does.
The payload is re-encoded the way queue:retry writes it (json_encode without
flags: non-ASCII as \uXXXX, {} as []).

retryUntil: artisan calls the job's retryUntil() method to compute a new
deadline; Go cannot run PHP. The stored payload.retryUntil is kept, except
when it has already passed, the payload has createdAt (Laravel 12.11+) and
the command does not carry a public retryUntil property (a property value is
what PHP would keep too): then it becomes now + (retryUntil - createdAt), the
same window from now. Payloads without createdAt (8.x to 12.10) keep the
stored value, so a job whose deadline passed fails again at once.

Unknown ids, and a --queue without failed jobs, are reported on stderr and
the exit status stays 0, as with artisan; a job that could not be pushed
back makes it 1.`

func retryCommand() *cli.Command {
	return &cli.Command{
		Name:        "retry",
		Usage:       "push failed jobs back onto their queue, like `php artisan queue:retry`",
		ArgsUsage:   "{ID...|all}",
		Description: retryHelp,
		Flags:       adminFlags(&cli.StringFlag{Name: "queue", Usage: "retry the failed jobs of this queue only (alone or with all)"}),
		Action:      cmdline.Action(runRetry),
	}
}

func runRetry(c *cli.Context, ids []string) error {
	all := len(ids) == 1 && ids[0] == "all"
	queue := c.String("queue")
	switch {
	case len(ids) == 0 && queue == "":
		return cli.Exit("retry: give failed job ids, `all`, or --queue", 2)
	case queue != "" && len(ids) > 0 && !all:
		return cli.Exit("retry: --queue goes with `all` or with no ids", 2)
	}
	s, err := queueconn.OpenSession(c)
	if err != nil {
		return err
	}
	defer s.Close()
	enc, err := queueconn.Encrypter(s.Cfg)
	if err != nil {
		return s.Fail(err)
	}
	hook := RetryHook(enc, time.Now)
	var results []jobqueue.RetryResult
	if all || len(ids) == 0 {
		results, err = s.Q.RetryAll(c.Context, queue, hook)
	} else {
		results, err = s.Q.Retry(c.Context, ids, hook)
	}
	if err != nil {
		return s.Fail(err)
	}
	if queue != "" && len(results) == 0 {
		output.Warn(c, "%s", s.Clean(fmt.Sprintf("Unable to find failed jobs for queue [%s].", output.Printable(queue))))
		return nil
	}
	return reportRetries(c, s, results)
}

// retryJSON is one retried job in --json output.
type retryJSON struct {
	UUID  string `json:"uuid"`
	Queue string `json:"queue"`
	JobID int64  `json:"job_id,omitempty"`
	Error string `json:"error,omitempty"`
	// Deprecated: job_id's former name, kept for one release.
	JobIDOld int64 `json:"jobId,omitempty"`
}

func reportRetries(c *cli.Context, s *queueconn.Session, results []jobqueue.RetryResult) error {
	failures := 0
	out := make([]retryJSON, 0, len(results))
	for _, r := range results {
		item := retryJSON{UUID: r.Failed.UUID, Queue: r.Failed.Queue, JobID: r.NewID, JobIDOld: r.NewID}
		if r.Err != nil {
			// artisan reports an unknown id and goes on, exit status 0.
			if !errors.Is(r.Err, jobqueue.ErrFailedJobNotFound) {
				failures++
			}
			item.Error = s.Clean(retryErrorText(r))
			if !c.Bool("json") {
				output.Warn(c, "%s", item.Error)
			}
		} else if !c.Bool("json") {
			output.Say(c, "The failed job [%s] has been pushed back onto the queue!", output.Printable(r.Failed.UUID))
		}
		out = append(out, item)
	}
	if c.Bool("json") {
		if err := output.WriteJSON(c.App.Writer, out); err != nil {
			return err
		}
	}
	if failures > 0 {
		return cli.Exit(fmt.Sprintf("retry: %d of %d failed jobs were not retried", failures, len(results)), 1)
	}
	return nil
}

func retryErrorText(r jobqueue.RetryResult) string {
	if errors.Is(r.Err, jobqueue.ErrFailedJobNotFound) {
		return fmt.Sprintf("Unable to find failed job with ID [%s].", output.Printable(r.Failed.UUID))
	}
	return r.Err.Error()
}

// RetryHook re-encodes a failed payload as queue:retry does, refreshing an
// expired retryUntil as retryHelp explains.
func RetryHook(enc *payload.Encrypter, now func() time.Time) jobqueue.RetryHook {
	return func(raw []byte) ([]byte, error) {
		return payload.ReencodeLikeRetry(raw, refreshedRetryUntil(raw, enc, now()))
	}
}

func refreshedRetryUntil(raw []byte, enc *payload.Encrypter, now time.Time) *int64 {
	p, err := payload.Parse(raw)
	if err != nil || p.RetryUntil == nil || p.CreatedAt == nil || *p.RetryUntil >= now.Unix() {
		return nil
	}
	if hasPublicRetryUntil(p, enc) {
		return nil
	}
	until := now.Unix() + (*p.RetryUntil - *p.CreatedAt)
	return &until
}

// hasPublicRetryUntil: the payload value came from a property, which a
// retry in PHP leaves alone. An unreadable command counts as "no".
func hasPublicRetryUntil(p *payload.Payload, enc *payload.Encrypter) bool {
	cmd, err := payload.DecodeCommand(p, enc)
	if err != nil {
		return false
	}
	for _, e := range cmd.Object.Entries {
		if !e.Key.IsInt && e.Key.Str == "retryUntil" {
			return true
		}
	}
	return false
}

func forgetCommand() *cli.Command {
	return &cli.Command{
		Name:      "forget",
		Usage:     "delete a failed job, like `php artisan queue:forget`",
		ArgsUsage: "ID",
		Flags:     adminFlags(),
		Action: cmdline.Action(func(c *cli.Context, args []string) error {
			if len(args) != 1 {
				return cli.Exit("forget: takes one failed job ID (its uuid)", 2)
			}
			id := args[0]
			s, err := queueconn.OpenSession(c)
			if err != nil {
				return err
			}
			defer s.Close()
			ok, err := s.Q.Forget(c.Context, id)
			if err != nil {
				return s.Fail(err)
			}
			if !ok {
				return cli.Exit("No failed job matches the given ID.", 1)
			}
			if c.Bool("json") {
				return output.WriteJSON(c.App.Writer, map[string]any{"id": id, "deleted": true})
			}
			output.Say(c, "Failed job deleted successfully!")
			return nil
		}),
	}
}

func flushCommand() *cli.Command {
	return &cli.Command{
		Name:  "flush",
		Usage: "delete all failed jobs, like `php artisan queue:flush`",
		Description: `Asks for confirmation first in production (APP_ENV=production, or APP_ENV
unset as Laravel reads it) and whenever stdin is a terminal; --force skips
the question. Without a terminal, production refuses without --force.`,
		Flags: adminFlags(cmdline.CountFlag("hours", 0, "only those that failed at least this many hours ago (Laravel 9+)"), forceFlag()),
		Action: cmdline.NoArgs(func(c *cli.Context) error {
			hours := int(cmdline.CountOf(c, "hours"))
			if hours < 0 {
				return cli.Exit("flush: --hours must not be negative", 2)
			}
			s, err := queueconn.OpenSession(c)
			if err != nil {
				return err
			}
			defer s.Close()
			deletes := "every failed job"
			if hours > 0 {
				deletes = fmt.Sprintf("the failed jobs that failed more than %d hours ago", hours)
			}
			if err := confirmToProceed(c, s, deletes); err != nil {
				return err
			}
			n, err := s.Q.Flush(c.Context, time.Duration(hours)*time.Hour)
			if err != nil {
				return s.Fail(err)
			}
			switch {
			case c.Bool("json"):
				return output.WriteJSON(c.App.Writer, map[string]int64{"deleted": n})
			case hours > 0:
				output.Say(c, "All jobs that failed more than %d hours ago have been deleted successfully.", hours)
			default:
				output.Say(c, "All failed jobs deleted successfully!")
			}
			return nil
		}),
	}
}

func pruneFailedCommand() *cli.Command {
	return &cli.Command{
		Name:  "prune-failed",
		Usage: "delete failed jobs older than --hours, like `php artisan queue:prune-failed`",
		Flags: adminFlags(cmdline.CountFlag("hours", 24, "the number of hours to retain failed jobs data")),
		Action: cmdline.NoArgs(func(c *cli.Context) error {
			hours := int(cmdline.CountOf(c, "hours"))
			if hours < 0 {
				return cli.Exit("prune-failed: --hours must not be negative", 2)
			}
			s, err := queueconn.OpenSession(c)
			if err != nil {
				return err
			}
			defer s.Close()
			n, err := s.Q.PruneFailed(c.Context, time.Duration(hours)*time.Hour)
			if err != nil {
				return s.Fail(err)
			}
			if c.Bool("json") {
				return output.WriteJSON(c.App.Writer, map[string]int64{"deleted": n})
			}
			output.Say(c, "%d entries deleted!", n)
			return nil
		}),
	}
}

func clearCommand() *cli.Command {
	return &cli.Command{
		Name:  "clear",
		Usage: "delete every job of a queue, reserved ones included, like `php artisan queue:clear`",
		Description: `Asks for confirmation first in production (APP_ENV=production, or APP_ENV
unset as Laravel reads it), as artisan does, and also whenever stdin is a
terminal, because clear deletes reserved (running) jobs too; --force skips
the question. Without a terminal, production refuses without --force.`,
		Flags: adminFlags(
			&cli.StringFlag{Name: "queue", Usage: "the queue to clear (default: the connection's default queue)"},
			forceFlag(),
		),
		Action: cmdline.NoArgs(func(c *cli.Context) error {
			s, err := queueconn.OpenSession(c)
			if err != nil {
				return err
			}
			defer s.Close()
			queue := c.String("queue")
			if queue == "" {
				queue = s.Cfg.DefaultQueue
			}
			if err := confirmToProceed(c, s, fmt.Sprintf("every job of the [%s] queue, reserved (running) ones included", output.Printable(queue))); err != nil {
				return err
			}
			n, err := s.Q.Clear(c.Context, queue)
			if err != nil {
				return s.Fail(err)
			}
			if c.Bool("json") {
				return output.WriteJSON(c.App.Writer, map[string]any{"queue": queue, "deleted": n})
			}
			output.Say(c, "Cleared %d jobs from the [%s] queue", n, output.Printable(queue))
			return nil
		}),
	}
}

func sizeCommand() *cli.Command {
	return &cli.Command{
		Name:  "size",
		Usage: "count the jobs of each queue: ready, delayed, reserved",
		Description: `reserved counts every reserved row; in --json, expired says how many of
those were reserved longer than retry_after (a worker may claim them again).
A paused queue says who holds it (a "paused" column; "paused" in --json):
queue:pause (php artisan queue:pause connection:queue, Laravel 12.40+),
queue:pause --all (13.25+), both read from the app's cache store, which every
PHP and Go worker obeys; laraworker pause (laraworker's own pause, which only
Go workers obey).`,
		Flags: adminFlags(&cli.StringFlag{Name: "queue", Usage: "only these queues, comma separated (listed even when empty)"}),
		Action: cmdline.NoArgs(func(c *cli.Context) error {
			s, err := queueconn.OpenSession(c)
			if err != nil {
				return err
			}
			defer s.Close()
			sizes, err := s.Q.Sizes(c.Context)
			if err != nil {
				return s.Fail(err)
			}
			sizes = selectQueues(sizes, c.String("queue"))
			return printSizes(c, sizes, queuePauses(c, s, sizes))
		}),
	}
}

// selectQueues keeps the named queues, in the order given, with zero rows
// for queues that have no jobs.
func selectQueues(sizes []jobqueue.QueueSize, names string) []jobqueue.QueueSize {
	if names == "" {
		return sizes
	}
	byName := make(map[string]jobqueue.QueueSize, len(sizes))
	for _, s := range sizes {
		byName[s.Queue] = s
	}
	var out []jobqueue.QueueSize
	for _, n := range strings.Split(names, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		s, ok := byName[n]
		if !ok {
			s = jobqueue.QueueSize{Queue: n}
		}
		out = append(out, s)
	}
	return out
}

type sizeJSON struct {
	Queue    string `json:"queue"`
	Ready    int64  `json:"ready"`
	Delayed  int64  `json:"delayed"`
	Reserved int64  `json:"reserved"`
	Expired  int64  `json:"expired"`
	Total    int64  `json:"total"`
	// Paused names who holds the queue (pausedBy...); left out when no one.
	Paused []string `json:"paused,omitempty"`
}

func printSizes(c *cli.Context, sizes []jobqueue.QueueSize, paused map[string][]string) error {
	if c.Bool("json") {
		out := make([]sizeJSON, 0, len(sizes))
		for _, s := range sizes {
			out = append(out, sizeJSON{s.Queue, s.Ready, s.Delayed, s.Reserved + s.Expired, s.Expired, s.Total(), paused[s.Queue]})
		}
		return output.WriteJSON(c.App.Writer, out)
	}
	headers := []string{"queue", "ready", "delayed", "reserved", "total"}
	if len(paused) > 0 {
		headers = append(headers, "paused")
	}
	rows := make([][]string, 0, len(sizes))
	for _, s := range sizes {
		row := []string{s.Queue, itoa(s.Ready), itoa(s.Delayed), itoa(s.Reserved + s.Expired), itoa(s.Total())}
		if len(paused) > 0 {
			row = append(row, strings.Join(paused[s.Queue], ", "))
		}
		rows = append(rows, row)
	}
	return output.WriteTable(c.App.Writer, headers, rows)
}

// Who holds a paused queue, as size shows it.
const (
	pausedByLaravel    = "queue:pause"
	pausedByLaravelAll = "queue:pause --all"
	pausedByLaraworker = "laraworker pause"
)

// queuePauses says who holds each listed queue: Laravel's pauses in the
// app's cache store (every worker obeys them) and laraworker's own
// (pauses table; Go workers only). What cannot be read is said on stderr
// and left out.
func queuePauses(c *cli.Context, s *queueconn.Session, sizes []jobqueue.QueueSize) map[string][]string {
	names := make([]string, 0, len(sizes))
	for _, q := range sizes {
		names = append(names, q.Queue)
	}
	out := map[string][]string{}
	if len(names) > 0 {
		st, err := queuepause.Read(c.Context, s.Conn.SharedCache(), s.Conn.Name, names)
		if err != nil {
			output.Warn(c, "%s", s.Clean("reading Laravel's queue pauses (queue:pause) failed: "+err.Error()))
		}
		for _, q := range st.Queues {
			if st.All {
				out[q] = append(out[q], pausedByLaravelAll)
			} else {
				out[q] = append(out[q], pausedByLaravel)
			}
		}
	}
	if own, err := s.Conn.Database("pause requests"); err == nil {
		// laraworker's tables may not exist: then nothing is paused by it.
		pauses, _ := own.Fleet.Pauses(c.Context)
		for _, p := range pauses {
			if p.Scope == fleet.ScopeQueue && slices.Contains(names, p.Target) {
				out[p.Target] = append(out[p.Target], pausedByLaraworker)
			}
		}
	}
	return out
}

func itoa(n int64) string { return fmt.Sprint(n) }
