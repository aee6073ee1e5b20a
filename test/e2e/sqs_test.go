package e2e

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testsqs"
	"github.com/laraworker/laraworker/laravel/payload"
)

// The SQS interop tests: real `php artisan queue:work sqs` (Laravel 8.83's
// SqsConnector, SqsQueue and SqsJob, unchanged; aws-sdk-php's SqsClient is
// the tests' stand-in, testdata/laravel/aws-sqs-shim, as Debian does not
// package aws-sdk-php) and the Go worker on one queue of a local SQS
// server (fauxqs, internal/testutil/testsqs).

// sqsApp is the test app's sqs connection on a fresh queue.
type sqsApp struct {
	s    *suite
	srv  *testsqs.Server
	name string
	url  string
	env  []string
}

func (s *suite) sqsQueue(t *testing.T) *sqsApp {
	t.Helper()
	srv := testsqs.Start(t)
	name, url := srv.Queue(t, "default", nil)
	a := &sqsApp{s: s, srv: srv, name: name, url: url}
	a.env = []string{"QUEUE_CONNECTION=sqs", "SQS_PREFIX=" + srv.Prefix, "SQS_QUEUE=" + name, "SQS_ENDPOINT=" + srv.Endpoint,
		"AWS_ACCESS_KEY_ID=AKIATEST", "AWS_SECRET_ACCESS_KEY=sqs-test-secret", "AWS_DEFAULT_REGION=us-east-1", hooksOnTheDatabase}
	return a
}

func (a *sqsApp) artisan(t *testing.T, args ...string) string {
	t.Helper()
	cmd := a.s.phpCmd(args...)
	cmd.Env = a.s.env(a.env...)
	return a.s.run(t, cmd)
}

// phpCmd is `php artisan queue:work sqs --sleep=0 args...`.
func (a *sqsApp) phpCmd(args ...string) *exec.Cmd {
	cmd := a.s.phpCmd(append([]string{"queue:work", "sqs", "--sleep=0"}, args...)...)
	cmd.Env = a.s.env(a.env...)
	return cmd
}

// goCmd is the Go worker on the sqs connection, running the recorder for
// class.
func (a *sqsApp) goCmd(t *testing.T, class string, recorderArgs []string, args ...string) *exec.Cmd {
	t.Helper()
	flags := []string{"--connection", "sqs", "--log-format", "json", a.s.route(class, recorderArgs...)}
	return a.s.classworkerCmd(t, a.env, append(flags, args...)...)
}

// counts are the queue's ready, delayed and in-flight messages.
func (a *sqsApp) counts(t *testing.T) (ready, delayed, inFlight int) {
	t.Helper()
	at := a.srv.Attributes(t, a.url)
	n := func(k string) int { v, _ := strconv.Atoi(at[k]); return v }
	return n("ApproximateNumberOfMessages"), n("ApproximateNumberOfMessagesDelayed"), n("ApproximateNumberOfMessagesNotVisible")
}

// TestSQSPHPAndGoDrainOneQueue: `php artisan queue:work sqs` and the Go
// worker drain one SQS queue side by side: every job runs once, as its
// first attempt, both take some, and the queue is empty after.
func TestSQSPHPAndGoDrainOneQueue(t *testing.T) {
	onMariaDB(t, func(t *testing.T, s *suite) {
		a := s.sqsQueue(t)
		const n = 300
		a.artisan(t, "app:dispatch", "noop", "--count="+strconv.Itoa(n))
		if ready, _, _ := a.counts(t); ready != n {
			t.Fatalf("%d messages after dispatching %d", ready, n)
		}
		goCmd := a.goCmd(t, noopJob, nil, "--stop-when-empty", "--sleep", "100ms")
		phpRun := s.start(t, a.phpCmd("--stop-when-empty"))
		waitFor(t, 30*time.Second, "PHP's first job", func() bool { return len(s.runs(t)) > 0 })
		goRun := s.start(t, goCmd)
		phpRun.wait(t, 2*time.Minute)
		goRun.wait(t, 2*time.Minute)
		runs := s.runs(t)
		byWorker := map[string]int{}
		for uuid, rs := range runsByUUID(runs) {
			if len(rs) != 1 || rs[0].Attempt != 1 {
				t.Errorf("job %s ran %d times: %+v", uuid, len(rs), rs)
			}
			byWorker[rs[0].Worker]++
		}
		if len(runs) != n {
			t.Fatalf("%d runs of %d jobs", len(runs), n)
		}
		t.Logf("runs by worker: %v", byWorker)
		if byWorker["go"] == 0 || byWorker["php"] == 0 {
			t.Errorf("both workers should have run jobs: %v\nGo's log:\n%s", byWorker, tail(goRun.stderr.String()))
		}
		if r, d, f := a.counts(t); r+d+f != 0 {
			t.Errorf("left on SQS: %d ready, %d delayed, %d in flight", r, d, f)
		}
	})
}

// TestSQSGoFailsPHPRetries: a job Go fails is in failed_jobs under the sqs
// connection with the queue URL as its queue, as PHP records it;
// `php artisan queue:failed` lists it, `php artisan queue:retry all` sends
// it back to SQS, and PHP runs it as a first attempt.
func TestSQSGoFailsPHPRetries(t *testing.T) {
	onMariaDB(t, func(t *testing.T, s *suite) {
		a := s.sqsQueue(t)
		a.artisan(t, "app:dispatch", "noop")
		s.run(t, a.goCmd(t, noopJob, []string{"-fail", "failing as asked"}, "--stop-when-empty"))
		failed := s.failed(t)
		if len(failed) != 1 || failed[0].Connection != "sqs" || failed[0].Queue != a.url || !strings.Contains(failed[0].Exception, "failing as asked") {
			t.Fatalf("failed rows %+v (want queue %s)", failed, a.url)
		}
		p, err := payload.Parse([]byte(failed[0].Payload))
		if err != nil {
			t.Fatal(err)
		}
		if listed := a.artisan(t, "queue:failed"); !strings.Contains(listed, p.UUID) || !strings.Contains(listed, "sqs") {
			t.Fatalf("queue:failed does not list the job:\n%s", listed)
		}
		a.artisan(t, "queue:retry", "all")
		if ready, _, _ := a.counts(t); ready != 1 || len(s.failed(t)) != 0 {
			t.Fatalf("after queue:retry: %d messages, %d failed rows", ready, len(s.failed(t)))
		}
		a.artisan(t, "queue:work", "sqs", "--sleep=0", "--stop-when-empty")
		runs := runsByUUID(s.runs(t))[p.UUID]
		if len(runs) != 2 || runs[0].Worker != "go" || runs[1].Worker != "php" || runs[1].Attempt != 1 {
			t.Fatalf("runs %+v: want Go's failed attempt, then PHP's first attempt after the retry", runs)
		}
	})
}

// TestSQSReleasedAndDelayed: a delayed job (DelaySeconds) waits; a job Go
// releases comes back with its receive counted, and PHP runs it as
// attempt 2.
func TestSQSReleasedAndDelayed(t *testing.T) {
	onMariaDB(t, func(t *testing.T, s *suite) {
		a := s.sqsQueue(t)
		a.artisan(t, "app:dispatch", "delayed", "--delay=3", "--queue="+a.name)
		dispatched := time.Now()
		if _, delayed, _ := a.counts(t); delayed != 1 {
			t.Fatal("the delayed job is not delayed on SQS")
		}
		s.run(t, a.goCmd(t, `App\Jobs\DelayedJob`, nil, "--stop-when-empty"))
		if len(s.runs(t)) != 0 && time.Since(dispatched) < 3*time.Second {
			t.Fatal("Go ran a delayed job before its delay")
		}
		waitFor(t, 30*time.Second, "the delayed job run by Go", func() bool {
			s.run(t, a.goCmd(t, `App\Jobs\DelayedJob`, nil, "--stop-when-empty"))
			return len(s.runs(t)) == 1
		})
		a.artisan(t, "app:dispatch", "noop")
		s.run(t, a.goCmd(t, noopJob, []string{"-release"}, "--once"))
		waitFor(t, 30*time.Second, "PHP runs the released job", func() bool {
			a.artisan(t, "queue:work", "sqs", "--sleep=0", "--tries=3", "--stop-when-empty")
			return len(s.runs(t)) == 3
		})
		runs := s.runs(t)
		if runs[1].Worker != "go" || runs[1].Attempt != 1 || runs[2].Worker != "php" || runs[2].Attempt != 2 {
			t.Fatalf("runs %+v: want Go's attempt 1, released, then PHP's attempt 2", runs)
		}
	})
}

// TestSQSSizeAndClear: `laraworker size` counts the SQS queue as Laravel
// 12.19+'s size() (ready, delayed, in flight), `laraworker clear` purges it.
func TestSQSSizeAndClear(t *testing.T) {
	onMariaDB(t, func(t *testing.T, s *suite) {
		a := s.sqsQueue(t)
		a.artisan(t, "app:dispatch", "noop", "--count=2")
		a.artisan(t, "app:dispatch", "delayed", "--delay=600", "--queue="+a.name)
		cmd := s.lwCmd("size", "--connection", "sqs", "--json")
		cmd.Env = s.env(a.env...)
		var sizes []struct {
			Queue          string
			Ready, Delayed int
		}
		if err := json.Unmarshal([]byte(s.run(t, cmd)), &sizes); err != nil {
			t.Fatal(err)
		}
		if len(sizes) != 1 || sizes[0].Queue != a.name || sizes[0].Ready != 2 || sizes[0].Delayed != 1 {
			t.Fatalf("size: %+v", sizes)
		}
		cmd = s.lwCmd("clear", "--connection", "sqs", "--force")
		cmd.Env = s.env(a.env...)
		s.run(t, cmd)
		if r, d, f := a.counts(t); r+d+f != 0 {
			t.Fatalf("after clear: %d %d %d", r, d, f)
		}
	})
}

// TestSQSDaemonLongPollsAndStopsCleanly: the Go worker as a daemon waits
// on the queue with a long poll instead of sleeping (no --sleep): a job
// sent while it waits runs at once, also one sent past the end of a poll,
// where artisan's loop (and Go's with --sleep) would be sleeping; on
// SIGTERM it stops within the poll and leaves nothing in flight.
func TestSQSDaemonLongPollsAndStopsCleanly(t *testing.T) {
	onMariaDB(t, func(t *testing.T, s *suite) {
		a := s.sqsQueue(t)
		// A NoopJob's body as PHP sends it, to send again without PHP's
		// start-up time.
		a.artisan(t, "app:dispatch", "noop")
		out, err := a.srv.Call("ReceiveMessage", map[string]any{"QueueUrl": a.url})
		if err != nil {
			t.Fatal(err)
		}
		msg := out["Messages"].([]any)[0].(map[string]any)
		body := msg["Body"].(string)
		if _, err := a.srv.Call("DeleteMessage", map[string]any{"QueueUrl": a.url, "ReceiptHandle": msg["ReceiptHandle"]}); err != nil {
			t.Fatal(err)
		}
		// laraworker itself, without --sleep (classworker's runs pass one).
		cmd := s.lwCmd("work", "--connection", "sqs", "--log-format", "json", s.route(noopJob))
		cmd.Env = s.env(append([]string{"LARAWORKER_E2E_RECORDER=" + s.recorder}, a.env...)...)
		run := s.start(t, cmd)
		waitFor(t, 30*time.Second, "the worker's start", func() bool {
			return strings.Contains(run.stderr.String(), `"worker started"`)
		})
		// The first job comes inside the first long poll (5 s); the second
		// 10.8 s after the first ran: past the end of the second poll that
		// followed it (the first poll's empty end goes straight to the
		// next claim: the job's end woke the loop), where a worker that
		// sleeps after an empty poll sleeps.
		for i, after := range []time.Duration{1500 * time.Millisecond, 10800 * time.Millisecond} {
			time.Sleep(after)
			a.srv.Send(t, a.url, body, nil)
			sent := time.Now()
			waitFor(t, 10*time.Second, "Go runs the job", func() bool { return len(s.runs(t)) == i+1 })
			if took := time.Since(sent); took > time.Second {
				t.Errorf("job %d ran %s after it was sent: a long poll answers at once", i, took)
			}
		}
		stopped := time.Now()
		if err := run.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		run.wait(t, 30*time.Second)
		// The stop waits for the long poll under way (5 s at most).
		if took := time.Since(stopped); took > 8*time.Second {
			t.Errorf("stopped %s after SIGTERM", took)
		}
		if r, d, f := a.counts(t); r+d+f != 0 {
			t.Errorf("left on SQS after the stop: %d ready, %d delayed, %d in flight", r, d, f)
		}
		if !strings.Contains(run.stderr.String(), `"sqs requests"`) {
			t.Errorf("no request counts logged at stop")
		}
	})
}

// TestSQSFIFOGroupOrderAcrossPHPAndGo: on a FIFO queue, `php artisan
// queue:work sqs` and the Go worker (concurrency 2) drain five groups of
// jobs together; each group's jobs run one after the other in the order
// they were sent, whichever worker runs them, and both workers run some.
// A received FIFO message locks its group until it is deleted, and Go
// holds at most twice its concurrency (its places and as many claimed
// ahead, worker/claimahead.go): with more groups than that, one group is
// always free for PHP's polls. (With concurrency 4 and three groups, Go's
// long poll, waiting at the server when a group unlocks, could take
// every job, and did in a CI run.) (Laravel 8.83 sends no
// MessageGroupId, which FIFO queues require: the jobs are PHP's bodies,
// dispatched to a standard queue and sent on with a group.)
func TestSQSFIFOGroupOrderAcrossPHPAndGo(t *testing.T) {
	onMariaDB(t, func(t *testing.T, s *suite) {
		a := s.sqsQueue(t)
		const concurrency = 2
		const groups, perGroup = 2*concurrency + 1, 12
		// One more job than the groups hold: PHP's probe, which tells
		// that PHP's worker polls before the groups are sent.
		a.artisan(t, "app:dispatch", "noop", "--count="+strconv.Itoa(groups*perGroup+1))
		var bodies []string
		for len(bodies) < groups*perGroup+1 {
			out, err := a.srv.Call("ReceiveMessage", map[string]any{"QueueUrl": a.url, "MaxNumberOfMessages": 10})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range out["Messages"].([]any) {
				msg := m.(map[string]any)
				bodies = append(bodies, msg["Body"].(string))
				if _, err := a.srv.Call("DeleteMessage", map[string]any{"QueueUrl": a.url, "ReceiptHandle": msg["ReceiptHandle"]}); err != nil {
					t.Fatal(err)
				}
			}
		}
		fifoName, fifoURL := a.srv.Queue(t, "orders.fifo", nil)
		a.env = append(a.env, "SQS_QUEUE="+fifoName)
		// Both workers poll before the groups are sent (PHP has run the
		// probe, Go has started), so that neither drains the queue
		// before the other has booted; Go's jobs take 50 ms.
		probe, bodies := bodies[0], bodies[1:]
		probeJob, err := payload.Parse([]byte(probe))
		if err != nil {
			t.Fatal(err)
		}
		phpRun := s.start(t, a.phpCmd())
		a.srv.Send(t, fifoURL, probe, map[string]any{"MessageGroupId": "probe", "MessageDeduplicationId": probeJob.UUID})
		waitFor(t, 60*time.Second, "PHP's probe job", func() bool { return len(s.runs(t)) == 1 })
		goRun := s.start(t, a.goCmd(t, noopJob, []string{"-hold", "50ms"}, "--concurrency", strconv.Itoa(concurrency)))
		waitFor(t, 60*time.Second, "Go's worker started", func() bool { return strings.Contains(goRun.stderr.String(), `"worker started"`) })
		place := map[string][2]int{} // uuid: group, index
		for i, body := range bodies {
			g, idx := i%groups, i/groups
			p, err := payload.Parse([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			place[p.UUID] = [2]int{g, idx}
			a.srv.Send(t, fifoURL, body, map[string]any{"MessageGroupId": "g" + strconv.Itoa(g), "MessageDeduplicationId": p.UUID})
		}
		waitFor(t, 2*time.Minute, "every job run", func() bool { return len(s.runs(t)) >= groups*perGroup+1 })
		for _, b := range []*background{phpRun, goRun} {
			if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			b.wait(t, 30*time.Second)
		}
		runs := s.runs(t)
		if len(runs) != groups*perGroup+1 {
			t.Fatalf("%d runs of %d jobs and the probe", len(runs), groups*perGroup)
		}
		next := make([]int, groups)
		byWorker := map[string]int{}
		for _, r := range runs {
			if r.UUID == probeJob.UUID {
				continue
			}
			at, ok := place[r.UUID]
			if !ok {
				t.Fatalf("a run of an unknown job %s", r.UUID)
			}
			if at[1] != next[at[0]] {
				t.Fatalf("group %d: job %d ran before job %d (%s)", at[0], at[1], next[at[0]], r.Worker)
			}
			next[at[0]]++
			byWorker[r.Worker]++
		}
		t.Logf("runs by worker: %v", byWorker)
		if byWorker["go"] == 0 || byWorker["php"] == 0 {
			t.Errorf("both workers should have run jobs: %v", byWorker)
		}
	})
}
