package horizon

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	uuid1 = "6f1d3c4e-5a8b-4c2d-9e0f-1a2b3c4d5e6f"
	uuid2 = "7a2e4d5f-6b9c-4d3e-8f1a-2b3c4d5e6f70"
	mail  = `App\Jobs\SendMail`
)

// RedisJobRepository::reserved (MarkJobAsReserved, on JobReserved with
// the reserved payload) and ::migrated (MarkJobsAsMigrated, on
// JobsMigrated): HMSET status, payload, updated_at (and reserved_at).
func TestReservedAndMigratedRecords(t *testing.T) {
	e := newEnv(t, Defaults())
	pushedPayload := horizonPayload(uuid1, mail, `"attempts":0`)
	e.pushed(t, uuid1, "default", pushedPayload)
	e.pushed(t, uuid2, "default", horizonPayload(uuid2, mail, `"attempts":0`))
	reserved := horizonPayload(uuid1, mail)
	migrated := horizonPayload(uuid2, mail, `"attempts":2`)
	if err := e.r.Reserved(e.ctx, []Job{{Queue: "default", Payload: migrated}}, []Job{{Queue: "default", Payload: reserved}}); err != nil {
		t.Fatal(err)
	}
	wantHash(t, "reserved job", e.hash(t, uuid1), map[string]string{
		"id": uuid1, "connection": "redis", "queue": "default", "name": mail, "created_at": pushedString,
		"status": "reserved", "payload": reserved, "updated_at": atString, "reserved_at": atString,
	})
	wantHash(t, "migrated job", e.hash(t, uuid2), map[string]string{
		"id": uuid2, "connection": "redis", "queue": "default", "name": mail, "created_at": pushedString,
		"status": "pending", "payload": migrated, "updated_at": atString,
	})
	// reserved() sets no expiry: the push's stays.
	if got := e.expiresAt(t, uuid1); got != pushedSec+3600 {
		t.Errorf("reserved job expires at %d, want the push's %d", got, pushedSec+3600)
	}
}

// RedisJobRepository::completed (MarkJobAsComplete on JobDeleted):
// ZADD completed_jobs -microtime id, ZREM pending_jobs id, HMSET status
// completed completed_at, EXPIREAT now + trim.completed minutes; and
// UpdateJobMetrics: LuaScripts::updateMetrics on queue:<queue> and
// job:<displayName> with the stopwatch's milliseconds (round(..., 2)),
// their keys in measured_queues / measured_jobs as the script sees KEYS[1]
// (prefixed).
func TestCompletedRecordsAndMetrics(t *testing.T) {
	cfg := Defaults()
	cfg.Trim.Completed = 30
	e := newEnv(t, cfg)
	p := horizonPayload(uuid1, mail)
	e.pushed(t, uuid1, "emails", horizonPayload(uuid1, mail, `"attempts":0`))
	if err := e.r.Reserved(e.ctx, nil, []Job{{Queue: "emails", Payload: p}}); err != nil {
		t.Fatal(err)
	}
	e.now = at.Add(12345678 * time.Nanosecond) // 12.345678 ms later: 12.35
	if err := e.r.Completed(e.ctx, []Job{{Queue: "emails", Payload: p}}); err != nil {
		t.Fatal(err)
	}
	done := itoa(at.Unix()) + ".1358" // microtime(true) S.135801, precision 14
	wantHash(t, "completed job", e.hash(t, uuid1), map[string]string{
		"id": uuid1, "connection": "redis", "queue": "emails", "name": mail, "created_at": pushedString,
		"status": "completed", "payload": p, "updated_at": atString, "reserved_at": atString, "completed_at": done,
	})
	if got, want := e.expiresAt(t, uuid1), e.now.Unix()+30*60; got != want {
		t.Errorf("completed job expires at %d, want now + trim.completed (30 min) = %d", got, want)
	}
	if got := e.score(t, "completed_jobs", uuid1); got != "-"+done {
		t.Errorf("completed_jobs score %q, want %q", got, "-"+done)
	}
	if got := e.score(t, "pending_jobs", uuid1); got != "" {
		t.Errorf("the job is still in pending_jobs (score %s)", got)
	}
	if got := e.score(t, "recent_jobs", uuid1); got == "" {
		t.Error("completed() does not touch recent_jobs, but the job left it")
	}
	wantHash(t, "queue metrics", e.hash(t, "queue:emails"), map[string]string{"throughput": "1", "runtime": "12.35"})
	wantHash(t, "job metrics", e.hash(t, `job:`+mail), map[string]string{"throughput": "1", "runtime": "12.35"})
	for set, member := range map[string]string{"measured_queues": prefix + "queue:emails", "measured_jobs": prefix + "job:" + mail} {
		if ok, _ := e.rc.SIsMember(e.ctx, prefix+set, member).Result(); !ok {
			t.Errorf("%s lacks %q", set, member)
		}
	}
}

// oneRun is one run of Horizon's LuaScripts::updateMetrics as its source
// describes it (src/LuaScripts.php): HSETNX throughput 0, SADD the key to
// the measured set, HMGET throughput and runtime, then HMSET throughput + 1
// and the running average (throughput * runtime + new) / (throughput + 1),
// or the new runtime when there was none. Its numbers go through the hash
// as text between runs.
var oneRun = redis.NewScript(`
redis.call('hsetnx', KEYS[1], 'throughput', 0)
redis.call('sadd', KEYS[2], KEYS[1])
local h = redis.call('hmget', KEYS[1], 'throughput', 'runtime')
local t = h[1] + 1
local r = tonumber(ARGV[1])
if h[2] then r = ((h[1] * tonumber(h[2])) + tonumber(ARGV[1])) / t end
redis.call('hmset', KEYS[1], 'throughput', t, 'runtime', r)
`)

// One run of metricsScript for a batch leaves the bytes one run of
// Horizon's script per job leaves, whatever the runtimes' digits.
func TestMetricsOfABatchEqualOneRunPerJob(t *testing.T) {
	e := newEnv(t, Defaults())
	runtimes := []any{"3.5", "10", "0.01", "12.35", "7.77", "1733.1", "0", "0.33"}
	for _, ms := range runtimes {
		if err := oneRun.Run(e.ctx, e.rc, []string{prefix + "queue:one", prefix + "measured_queues"}, ms).Err(); err != nil && err != redis.Nil {
			t.Fatal(err)
		}
	}
	if err := metricsScript.Run(e.ctx, e.rc, []string{prefix + "queue:batch", prefix + "measured_queues"}, runtimes...).Err(); err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	one, batch := e.hash(t, "queue:one"), e.hash(t, "queue:batch")
	if one["throughput"] != "8" || batch["throughput"] != one["throughput"] || batch["runtime"] != one["runtime"] {
		t.Fatalf("one run per job %v, one batch %v: want equal, throughput 8", one, batch)
	}
	got, _ := strconv.ParseFloat(one["runtime"], 64)
	want := (3.5 + 10 + 0.01 + 12.35 + 7.77 + 1733.1 + 0 + 0.33) / 8
	if d := got - want; d > 1e-9 || d < -1e-9 {
		t.Errorf("runtime %s, want the running average %v", one["runtime"], want)
	}
}

// A job whose payload says "silenced" goes to silenced_jobs instead of
// completed_jobs (RedisJobRepository::completed, $silenced); a job with a
// monitored tag is remembered (MarkJobAsComplete -> remember():
// monitored_jobs, the full hash, EXPIREAT trim.monitored).
func TestSilencedAndMonitoredJobs(t *testing.T) {
	e := newEnv(t, Defaults())
	silenced := horizonPayload(uuid1, mail, `"silenced":true`)
	tagged := horizonPayload(uuid2, mail, `"tags":["App\\Models\\User:1","beta"]`)
	if err := e.rc.SAdd(e.ctx, prefix+"monitoring", `App\Models\User:1`).Err(); err != nil {
		t.Fatal(err)
	}
	if err := e.r.Completed(e.ctx, []Job{{Queue: "default", Payload: silenced}, {Queue: "default", Payload: tagged}}); err != nil {
		t.Fatal(err)
	}
	if e.score(t, "silenced_jobs", uuid1) != atNegString || e.score(t, "completed_jobs", uuid1) != "" {
		t.Errorf("silenced job: silenced_jobs %q, completed_jobs %q; want it in silenced_jobs only",
			e.score(t, "silenced_jobs", uuid1), e.score(t, "completed_jobs", uuid1))
	}
	if got := e.score(t, "monitored_jobs", uuid2); got != atNegString {
		t.Errorf("monitored_jobs score %q, want %q", got, atNegString)
	}
	wantHash(t, "monitored job", e.hash(t, uuid2), map[string]string{
		"id": uuid2, "connection": "redis", "queue": "default", "name": mail, "status": "completed",
		"payload": tagged, "completed_at": atString,
	})
	if got := e.expiresAt(t, uuid2); got != minutes(10080) {
		t.Errorf("monitored job expires at %d, want now + trim.monitored = %d", got, minutes(10080))
	}
	// Not monitored, not remembered.
	if e.score(t, "monitored_jobs", uuid1) != "" {
		t.Error("an untagged job is in monitored_jobs")
	}
	// A job this process did not reserve has no stopwatch: runtime 0
	// (UpdateJobMetrics' `?: 0`).
	wantHash(t, "metrics", e.hash(t, "queue:default"), map[string]string{"throughput": "2", "runtime": "0"})
}

// Failing a job: Laravel's Job::fail deletes it first (JobDeleted with
// hasFailed: completed() without metrics or remember), then Horizon's
// JobFailed: RedisJobRepository::failed (failed_jobs and
// recent_failed_jobs, out of pending, completed and silenced, the full
// hash with the exception and context, EXPIREAT trim.failed) and
// StoreTagsForFailedJob (ZADD failed:<tag> microtime id, EXPIRE
// trim.failed minutes, 2880 when unset).
func TestFailedRecords(t *testing.T) {
	e := newEnv(t, Defaults())
	p := horizonPayload(uuid1, mail, `"tags":["App\\Models\\User:1"]`)
	e.pushed(t, uuid1, "default", horizonPayload(uuid1, mail, `"attempts":0`))
	if err := e.rc.SAdd(e.ctx, prefix+"monitoring", `App\Models\User:1`).Err(); err != nil {
		t.Fatal(err)
	}
	if err := e.r.Reserved(e.ctx, nil, []Job{{Queue: "default", Payload: p}}); err != nil {
		t.Fatal(err)
	}
	exception := "RuntimeException: boom in /app/Jobs/SendMail.php:12\nStack trace:\n#0 {main}"
	if err := e.r.Failed(e.ctx, Job{Queue: "default", Payload: p}, exception); err != nil {
		t.Fatal(err)
	}
	wantHash(t, "failed job", e.hash(t, uuid1), map[string]string{
		"id": uuid1, "connection": "redis", "queue": "default", "name": mail, "created_at": pushedString,
		"status": "failed", "payload": p, "updated_at": atString, "reserved_at": atString,
		"completed_at": atString, "exception": exception, "context": "", "failed_at": atString,
	})
	if got := e.expiresAt(t, uuid1); got != minutes(10080) {
		t.Errorf("failed job expires at %d, want now + trim.failed = %d", got, minutes(10080))
	}
	for set, want := range map[string]string{"failed_jobs": atNegString, "recent_failed_jobs": atNegString,
		"pending_jobs": "", "completed_jobs": "", "silenced_jobs": "", "monitored_jobs": ""} {
		if got := e.score(t, set, uuid1); got != want {
			t.Errorf("%s score %q, want %q", set, got, want)
		}
	}
	if got := e.score(t, `failed:App\Models\User:1`, uuid1); got != atString {
		t.Errorf("failed:<tag> score %q, want microtime %q", got, atString)
	}
	// EXPIRE is relative: Redis's clock, a few seconds after the tests' now.
	if got := e.expiresAt(t, `failed:App\Models\User:1`); got < minutes(2880) || got > minutes(2880)+60 {
		t.Errorf("failed:<tag> expires at %d, want now + 2880 minutes (StoreTagsForFailedJob's default) = %d", got, minutes(2880))
	}
	if n, _ := e.rc.Exists(e.ctx, prefix+"queue:default", prefix+"job:"+mail).Result(); n != 0 {
		t.Error("a failed job counted in the metrics (UpdateJobMetrics skips failed jobs)")
	}
}

// RedisJobRepository::released (MarkJobAsReleased on JobReleased): status
// pending, the reserved payload, updated_at.
func TestReleasedRecord(t *testing.T) {
	e := newEnv(t, Defaults())
	p := horizonPayload(uuid1, mail)
	e.pushed(t, uuid1, "default", horizonPayload(uuid1, mail, `"attempts":0`))
	if err := e.r.Reserved(e.ctx, nil, []Job{{Queue: "default", Payload: p}}); err != nil {
		t.Fatal(err)
	}
	e.now = at.Add(time.Second)
	if err := e.r.Released(e.ctx, Job{Queue: "default", Payload: p}); err != nil {
		t.Fatal(err)
	}
	wantHash(t, "released job", e.hash(t, uuid1), map[string]string{
		"id": uuid1, "connection": "redis", "queue": "default", "name": mail, "created_at": pushedString,
		"status": "pending", "payload": p, "updated_at": itoa(at.Unix()+1) + ".1235", "reserved_at": atString,
	})
	if got := e.score(t, "pending_jobs", uuid1); got == "" {
		t.Error("a released job left pending_jobs")
	}
}

// updateRetryInformationOnParent: a retry (payload "retry_of", set by
// Horizon's RetryFailedJob) that completes or fails updates its entry in
// the parent's retried_by, a JSON list storeRetryReference wrote
// (json_encode of {id, status, retried_at} objects), re-encoded as
// json_encode writes it.
func TestRetryUpdatesItsParent(t *testing.T) {
	e := newEnv(t, Defaults())
	parent := "0b6c0c4e-0000-4000-8000-000000000001"
	if err := e.rc.HSet(e.ctx, prefix+parent, "retried_by",
		`[{"id":"`+uuid2+`","status":"pending","retried_at":1733068000},{"id":"`+uuid1+`","status":"pending","retried_at":1733068600}]`).Err(); err != nil {
		t.Fatal(err)
	}
	p := horizonPayload(uuid1, mail, `"retry_of":"`+parent+`"`)
	if err := e.r.Completed(e.ctx, []Job{{Queue: "default", Payload: p}}); err != nil {
		t.Fatal(err)
	}
	want := `[{"id":"` + uuid2 + `","status":"pending","retried_at":1733068000},{"id":"` + uuid1 + `","status":"completed","retried_at":1733068600}]`
	if got := e.hash(t, parent)["retried_by"]; got != want {
		t.Errorf("retried_by\n got %s\nwant %s", got, want)
	}
	p2 := horizonPayload(uuid2, mail, `"retry_of":"`+parent+`"`)
	if err := e.r.Failed(e.ctx, Job{Queue: "default", Payload: p2}, "E"); err != nil {
		t.Fatal(err)
	}
	want = `[{"id":"` + uuid2 + `","status":"failed","retried_at":1733068000},{"id":"` + uuid1 + `","status":"completed","retried_at":1733068600}]`
	if got := e.hash(t, parent)["retried_by"]; got != want {
		t.Errorf("retried_by after the failure\n got %s\nwant %s", got, want)
	}
}

// The trims of a master supervisor's loop: TrimRecentJobs
// (ZREMRANGEBYSCORE recent_jobs, recent_failed_jobs, pending_jobs,
// completed_jobs, silenced_jobs with -(now - trim minutes) .. +inf) every
// minute, TrimFailedJobs every trim.failed / 12 minutes.
func TestTrims(t *testing.T) {
	cfg := Defaults()
	cfg.Trim.Completed = 10
	e := newEnv(t, cfg)
	old := -float64(at.Unix() - 11*60) // completed 11 minutes ago
	recent := -float64(at.Unix() - 9*60)
	for _, m := range []struct {
		key   string
		score float64
		id    string
	}{{"completed_jobs", old, "old"}, {"completed_jobs", recent, "recent"}, {"recent_jobs", old, "old"},
		{"failed_jobs", -float64(at.Unix() - 10081*60), "oldfail"}, {"failed_jobs", old, "newfail"}} {
		if err := e.rc.Do(e.ctx, "zadd", prefix+m.key, strconv.FormatFloat(m.score, 'f', -1, 64), m.id).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.r.Completed(e.ctx, []Job{{Queue: "default", Payload: horizonPayload(uuid1, mail)}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key, id string
		kept    bool
	}{{"completed_jobs", "old", false}, {"completed_jobs", "recent", true}, {"recent_jobs", "old", true},
		{"failed_jobs", "oldfail", false}, {"failed_jobs", "newfail", true}, {"completed_jobs", uuid1, true}} {
		if kept := e.score(t, c.key, c.id) != ""; kept != c.kept {
			t.Errorf("%s %s kept = %v, want %v", c.key, c.id, kept, c.kept)
		}
	}
	// The next trim of completed_jobs waits a minute.
	if err := e.rc.Do(e.ctx, "zadd", prefix+"completed_jobs", strconv.FormatFloat(old, 'f', -1, 64), "old").Err(); err != nil {
		t.Fatal(err)
	}
	e.now = at.Add(59 * time.Second)
	if err := e.r.Completed(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	if e.score(t, "completed_jobs", "old") == "" {
		t.Error("trimmed again within the minute")
	}
	e.now = at.Add(time.Minute)
	if err := e.r.Completed(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	if e.score(t, "completed_jobs", "old") != "" {
		t.Error("not trimmed a minute later")
	}
}

// A payload Horizon's JobPayload cannot read gets no record and an error
// (the caller logs it); the other jobs of the batch are recorded.
func TestUnreadablePayloadIsReported(t *testing.T) {
	e := newEnv(t, Defaults())
	err := e.r.Completed(e.ctx, []Job{{Queue: "default", Payload: "not json"}, {Queue: "default", Payload: horizonPayload(uuid1, mail)}})
	if err == nil {
		t.Fatal("no error for an unreadable payload")
	}
	if e.hash(t, uuid1)["status"] != "completed" {
		t.Error("the readable job of the batch was not recorded")
	}
}

// TestTagsInPHPOrder: a payload's tags are read in the order PHP iterates
// them, whatever shape json_encode (or cjson, after a Redis release) gave
// the array: a list, an object (a list with holes), empty as [] or {}.
func TestTagsInPHPOrder(t *testing.T) {
	cases := map[string][]string{
		`["a","b"]`: {"a", "b"},
		`{"7":"g","1":"b","3":"d","0":"a","5":"f","2":"c","6":"h","4":"e"}`: {"g", "b", "d", "a", "f", "c", "h", "e"},
		`{"x":1,"y":true}`: {"1", "1"},
		`[]`:               nil,
		`{}`:               nil,
	}
	for tags, want := range cases {
		d, err := decode(`{"uuid":"u","displayName":"C","tags":` + tags + `}`)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(d.tags, want) {
			t.Errorf("tags %s read as %q, want %q", tags, d.tags, want)
		}
	}
}
