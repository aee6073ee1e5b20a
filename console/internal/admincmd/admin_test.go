package admincmd_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/console/internal/admincmd"
	"github.com/laraworker/laraworker/console/internal/clitest"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/store/database"
)

func TestFailedListsFailedJobs(t *testing.T) {
	clitest.ForEachEngine(t, func(t *testing.T, tg *clitest.Target) {
		out := tg.MustRun(t, "failed")
		if out != "No failed jobs!\n" {
			t.Errorf("empty failed_jobs: got %q", out)
		}
		a := clitest.FailJob(t, tg.Ctx, tg.Q, tg.Pushed(t, `App\Jobs\SendMail`, "--queue", "mail"))
		b := clitest.FailJob(t, tg.Ctx, tg.Q, tg.Pushed(t, `App\Jobs\Report`))

		out = tg.MustRun(t, "failed")
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 6 {
			t.Fatalf("want a table of 2 rows (6 lines), got:\n%s", out)
		}
		for _, l := range []int{0, 2, 5} {
			if !strings.HasPrefix(lines[l], "+-") || strings.Trim(lines[l], "+-") != "" {
				t.Errorf("line %d is not a border: %q", l, lines[l])
			}
		}
		if !strings.HasPrefix(lines[1], "| ID ") || !strings.Contains(lines[1], "| Connection | Queue   | Class             | Failed At           |") {
			t.Errorf("header: %q", lines[1])
		}
		// Newest first, as queue:failed.
		if !strings.HasPrefix(lines[3], "| "+b+" | database   | default | App\\Jobs\\Report   | ") ||
			!strings.HasPrefix(lines[4], "| "+a+" | database   | mail    | App\\Jobs\\SendMail | ") {
			t.Errorf("rows:\n%s\n%s", lines[3], lines[4])
		}
		if len(lines[1]) != len(lines[3]) || len(lines[0]) != len(lines[1]) {
			t.Errorf("ragged table:\n%s", out)
		}

		// snake_case keys, as failed_jobs' columns; failedAt kept a release.
		var listed []map[string]any
		if err := json.Unmarshal([]byte(tg.MustRun(t, "failed", "--json", "--queue", "mail")), &listed); err != nil {
			t.Fatal(err)
		}
		if len(listed) != 1 || listed[0]["uuid"] != a || listed[0]["class"] != `App\Jobs\SendMail` || listed[0]["queue"] != "mail" ||
			listed[0]["connection"] != "database" || !strings.HasPrefix(listed[0]["exception"].(string), "RuntimeException: boom") ||
			listed[0]["failed_at"] == "" || listed[0]["failed_at"] != listed[0]["failedAt"] {
			t.Errorf("failed --json --queue=mail: %+v", listed)
		}
	})
}

func TestRetryPushesBackLikeQueueRetry(t *testing.T) {
	clitest.ForEachEngine(t, func(t *testing.T, tg *clitest.Target) {
		// Non-ASCII and an empty object make queue:retry's re-encoding
		// visible: \u00e9 and [] instead of é and {}.
		job := tg.Pushed(t, `App\Jobs\Greet`, "--prop", "name=Zoé", "--prop", "opts={}", "--queue", "greetings", "--tries", "3")
		uuid := clitest.FailJob(t, tg.Ctx, tg.Q, job)
		if len(tg.Jobs(t)) != 0 {
			t.Fatal("the failed job is still in jobs")
		}

		before := time.Now().Unix()
		out := tg.MustRun(t, "retry", uuid)
		if out != "The failed job ["+uuid+"] has been pushed back onto the queue!\n" {
			t.Errorf("retry output %q", out)
		}
		jobs := tg.Jobs(t)
		if len(jobs) != 1 {
			t.Fatalf("want 1 jobs row, got %d", len(jobs))
		}
		got := jobs[0]
		want, err := payload.ReencodeLikeRetry(job.Payload, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Payload, want) {
			t.Errorf("payload:\n got %s\nwant %s", got.Payload, want)
		}
		if bytes.Equal(got.Payload, job.Payload) || !bytes.Contains(got.Payload, []byte(`Zo\u00e9`)) {
			t.Errorf("payload was not re-encoded as queue:retry does: %s", got.Payload)
		}
		p, err := payload.Parse(got.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if p.UUID != uuid || got.Queue != "greetings" || got.Attempts != 0 || got.ReservedAt != nil ||
			got.AvailableAt < before || got.AvailableAt > time.Now().Unix() {
			t.Errorf("row: uuid %s queue %s attempts %d reserved %v available_at %d", p.UUID, got.Queue, got.Attempts, got.ReservedAt, got.AvailableAt)
		}
		if left := tg.FailedUUIDs(t); len(left) != 0 {
			t.Errorf("failed_jobs still holds %v", left)
		}

		// As artisan: the unknown id is reported, the exit status is 0.
		_, stderr, code := tg.Run(t, "retry", "no-such-uuid")
		if code != 0 || stderr != "Unable to find failed job with ID [no-such-uuid].\n" {
			t.Errorf("unknown id: exit %d, stderr %q", code, stderr)
		}
	})
}

func TestRetryAllOfOneQueue(t *testing.T) {
	clitest.ForEachEngine(t, func(t *testing.T, tg *clitest.Target) {
		x1 := clitest.FailJob(t, tg.Ctx, tg.Q, tg.Pushed(t, `App\Jobs\A`, "--queue", "x"))
		y := clitest.FailJob(t, tg.Ctx, tg.Q, tg.Pushed(t, `App\Jobs\B`, "--queue", "y"))
		x2 := clitest.FailJob(t, tg.Ctx, tg.Q, tg.Pushed(t, `App\Jobs\C`, "--queue", "x"))

		var res []admincmd.RetryJSON
		if err := json.Unmarshal([]byte(tg.MustRun(t, "retry", "all", "--queue=x", "--json")), &res); err != nil {
			t.Fatal(err)
		}
		if len(res) != 2 || res[0].UUID != x2 || res[1].UUID != x1 || res[0].JobID == 0 || res[0].Error != "" {
			t.Errorf("retry all --queue=x: %+v", res)
		}
		if left := tg.FailedUUIDs(t); len(left) != 1 || left[0] != y {
			t.Errorf("failed_jobs left: %v, want only %s", left, y)
		}
		for _, j := range tg.Jobs(t) {
			if j.Queue != "x" {
				t.Errorf("a job of queue %s was pushed", j.Queue)
			}
		}
		_, stderr, code := tg.Run(t, "retry", "--queue=nothing-here")
		if code != 0 || stderr != "Unable to find failed jobs for queue [nothing-here].\n" {
			t.Errorf("empty queue: exit %d, stderr %q", code, stderr)
		}
		// Flags before the arguments work too.
		out, stderr, code := clitest.RunCLI(t, append(append([]string{"retry"}, tg.Flags...), "all")...)
		if code != 0 || out != "The failed job ["+y+"] has been pushed back onto the queue!\n" {
			t.Errorf("retry all: exit %d, %q %q", code, out, stderr)
		}
	})
}

func TestRetryRefreshesAnExpiredRetryUntil(t *testing.T) {
	clitest.ForEachEngine(t, func(t *testing.T, tg *clitest.Target) {
		// A 12.11+ payload whose retryUntil came from a retryUntil() method
		// (no property): dispatched an hour ago with a 600 s window.
		now := time.Now()
		created := now.Add(-time.Hour)
		raw, err := payload.BuildObjectPayload(payload.NewCommand(`App\Jobs\Window`, nil, payload.Dispatch{Shape: payload.Shape12}),
			payload.BuildOptions{Shape: payload.Shape12, Now: created})
		if err != nil {
			t.Fatal(err)
		}
		until := created.Unix() + 600
		if raw, err = payload.ReencodeLikeRetry(raw, &until); err != nil {
			t.Fatal(err)
		}
		id, err := tg.Q.Push(tg.Ctx, jobqueue.PushItem{Payload: raw})
		if err != nil {
			t.Fatal(err)
		}
		uuid := clitest.FailJob(t, tg.Ctx, tg.Q, tg.JobByID(t, id.Num))
		tg.MustRun(t, "retry", uuid)
		p, err := payload.Parse(tg.Jobs(t)[0].Payload)
		if err != nil {
			t.Fatal(err)
		}
		if p.RetryUntil == nil || *p.RetryUntil < now.Unix()+600 || *p.RetryUntil > time.Now().Unix()+600 {
			t.Errorf("retryUntil %v, want now + 600 (now %d)", p.RetryUntil, now.Unix())
		}
	})
}

func TestForget(t *testing.T) {
	clitest.ForEachEngine(t, func(t *testing.T, tg *clitest.Target) {
		a := clitest.FailJob(t, tg.Ctx, tg.Q, tg.Pushed(t, `App\Jobs\A`))
		b := clitest.FailJob(t, tg.Ctx, tg.Q, tg.Pushed(t, `App\Jobs\B`))
		if out := tg.MustRun(t, "forget", a); out != "Failed job deleted successfully!\n" {
			t.Errorf("forget: %q", out)
		}
		if left := tg.FailedUUIDs(t); len(left) != 1 || left[0] != b {
			t.Errorf("left %v, want [%s]", left, b)
		}
		_, stderr, code := tg.Run(t, "forget", a)
		if code != 1 || stderr != "laraworker: No failed job matches the given ID.\n" {
			t.Errorf("forget again: exit %d, %q", code, stderr)
		}
	})
}

// failedAt fails a job with failed_at set hoursAgo hours back.
func failedHoursAgo(t *testing.T, tg *clitest.Target, class string, hoursAgo int) string {
	t.Helper()
	past := time.Now().Add(-time.Duration(hoursAgo) * time.Hour)
	q, err := database.Open(tg.Ctx, tg.Cfg, database.Options{Clock: func() time.Time { return past }})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	return clitest.FailJob(t, tg.Ctx, q, tg.Pushed(t, class))
}

func TestFlushAndPruneFailed(t *testing.T) {
	clitest.ForEachEngine(t, func(t *testing.T, tg *clitest.Target) {
		old := failedHoursAgo(t, tg, `App\Jobs\Old`, 72)
		mid := failedHoursAgo(t, tg, `App\Jobs\Mid`, 30)
		recent := failedHoursAgo(t, tg, `App\Jobs\Recent`, 1)

		if out := tg.MustRun(t, "flush", "--hours", "48"); out != "All jobs that failed more than 48 hours ago have been deleted successfully.\n" {
			t.Errorf("flush --hours: %q", out)
		}
		if left := tg.FailedUUIDs(t); len(left) != 2 || left[0] != recent || left[1] != mid {
			t.Errorf("after flush --hours 48: %v (old %s)", left, old)
		}
		if out := tg.MustRun(t, "prune-failed"); out != "1 entries deleted!\n" {
			t.Errorf("prune-failed: %q", out)
		}
		if left := tg.FailedUUIDs(t); len(left) != 1 || left[0] != recent {
			t.Errorf("after prune-failed: %v", left)
		}
		if out := tg.MustRun(t, "prune-failed", "--hours=2", "--json"); out != "{\n  \"deleted\": 0\n}\n" {
			t.Errorf("prune-failed --hours=2: %q", out)
		}
		failedHoursAgo(t, tg, `App\Jobs\Another`, 0)
		if out := tg.MustRun(t, "flush"); out != "All failed jobs deleted successfully!\n" {
			t.Errorf("flush: %q", out)
		}
		if left := tg.FailedUUIDs(t); len(left) != 0 {
			t.Errorf("after flush: %v", left)
		}
	})
}

func TestClearAndSize(t *testing.T) {
	clitest.ForEachEngine(t, func(t *testing.T, tg *clitest.Target) {
		for range 3 {
			tg.Pushed(t, `App\Jobs\A`)
		}
		tg.Pushed(t, `App\Jobs\A`, "--delay", "600")
		tg.Pushed(t, `App\Jobs\B`, "--queue", "x")
		tg.Pushed(t, `App\Jobs\B`, "--queue", "x")
		if j, err := tg.Q.Claim(tg.Ctx, []string{"default"}, 1, jobqueue.ClaimOptions{}); err != nil || len(j) != 1 {
			t.Fatalf("claim: %v %v", j, err)
		}

		want := "" +
			"+---------+-------+---------+----------+-------+\n" +
			"| queue   | ready | delayed | reserved | total |\n" +
			"+---------+-------+---------+----------+-------+\n" +
			"| default | 2     | 1       | 1        | 4     |\n" +
			"| x       | 2     | 0       | 0        | 2     |\n" +
			"+---------+-------+---------+----------+-------+\n"
		if out := tg.MustRun(t, "size"); out != want {
			t.Errorf("size:\n%s\nwant:\n%s", out, want)
		}

		out := tg.MustRun(t, "clear", "--queue", "x", "--force")
		if out != "Cleared 2 jobs from the [x] queue\n" {
			t.Errorf("clear: %q", out)
		}
		var sizes []admincmd.SizeJSON
		if err := json.Unmarshal([]byte(tg.MustRun(t, "size", "--json", "--queue", "x,default")), &sizes); err != nil {
			t.Fatal(err)
		}
		wantSizes := []admincmd.SizeJSON{{Queue: "x"}, {Queue: "default", Ready: 2, Delayed: 1, Reserved: 1, Total: 4}}
		if fmt.Sprint(sizes) != fmt.Sprint(wantSizes) {
			t.Errorf("size --json: %+v, want %+v", sizes, wantSizes)
		}
		// Without --queue, clear empties the default queue, reserved rows too.
		if out := tg.MustRun(t, "clear"); out != "Cleared 4 jobs from the [default] queue\n" {
			t.Errorf("clear: %q", out)
		}
		if n := len(tg.Jobs(t)); n != 0 {
			t.Errorf("%d rows left", n)
		}
	})
}

func TestTablesIsIdempotent(t *testing.T) {
	tg := clitest.NewTarget(t, appconfig.EngineSQLite)
	out := tg.MustRun(t, "tables", "--json")
	var got map[string]string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got["jobs"] != tg.Cfg.JobsTable || got["failed"] != tg.Cfg.FailedTable || got["batches"] != tg.Cfg.BatchesTable {
		t.Errorf("tables --json: %v", got)
	}
	tg.Pushed(t, `App\Jobs\A`)
	tg.MustRun(t, "tables")
	if n := len(tg.Jobs(t)); n != 1 {
		t.Errorf("tables touched an existing table: %d rows", n)
	}
}

// TestFailedJSONRedactsSecrets: an exception quoting the app's DB password
// (as a driver or a DSN would) shows [redacted] in `failed --json`.
func TestFailedJSONRedactsSecrets(t *testing.T) {
	const password = `Zq+8/&<>'pw-38`
	t.Setenv("LARAWORKER_DB_PASSWORD", password)
	tg := clitest.NewTarget(t, appconfig.EngineSQLite)
	j := tg.Pushed(t, `App\Jobs\Leak`)
	p, err := payload.Parse(j.Payload)
	if err != nil {
		t.Fatal(err)
	}
	exc := `PDOException: SQLSTATE[HY000] [1045] (using password: ` + password + `) dsn mysql://app:Zq%2B8%2F%26%3C%3E%27pw-38@db`
	if err := tg.Q.Fail(tg.Ctx, j, p.UUID, exc, jobqueue.Followup{}); err != nil {
		t.Fatal(err)
	}
	out := tg.MustRun(t, "failed", "--json")
	var listed []map[string]any
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	if got := listed[0]["exception"]; got != `PDOException: SQLSTATE[HY000] [1045] (using password: [redacted]) dsn mysql://app:[redacted]@db` {
		t.Errorf("failed --json shows the exception %q", got)
	}
}
