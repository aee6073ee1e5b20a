package horizon

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testredis"
	"github.com/redis/go-redis/v9"
)

// The expected records below are written from Horizon's source, laravel/
// horizon v5.29.1 (branch 5.x at d9c39ce, the snapshot read with the
// project's fetch tool): each test names the file and method whose writes
// it states.

const prefix = "laravel_horizon:"

// at is the "now" of the tests: this second (keys expire by the real
// clock) and 123456 microseconds, so microtime(true) is S.123456, which
// PHP writes (precision 14, ten digits before the point) as S.1235.
var (
	at          = time.Unix(time.Now().Unix(), 123456000)
	atString    = itoa(at.Unix()) + ".1235"
	atNegString = "-" + atString
	// pushedAt is when the tests' jobs were pushed: 100.5 s before.
	pushedSec    = at.Unix() - 100
	pushedString = itoa(pushedSec) + ".5"
)

type env struct {
	rc  *redis.Client
	r   *Recorder
	ctx context.Context
	now time.Time
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	srv := testredis.Start(t)
	rc := srv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	e := &env{rc: rc, ctx: ctx, now: at}
	cfg.Prefix = prefix // an app's published config/horizon.php: APP_NAME's slug + "_horizon:"
	e.r = New(rc, "redis", cfg)
	e.r.SetClock(func() time.Time { return e.now })
	return e
}

// payload is a job as Horizon's RedisQueue::pushRaw writes it
// (JobPayload::prepare adds type, tags, silenced and pushedAt), after a
// pop (attempts 1), with extra top-level fields.
func horizonPayload(uuid, class string, extra ...string) string {
	fields := []string{
		`"uuid":"` + uuid + `"`,
		`"displayName":"` + strings.ReplaceAll(class, `\`, `\\`) + `"`,
		`"job":"Illuminate\\Queue\\CallQueuedHandler@call"`,
		`"data":{"commandName":"` + strings.ReplaceAll(class, `\`, `\\`) + `","command":"O:8:\"stdClass\":0:{}"}`,
		`"id":"` + uuid + `"`, `"attempts":1`, `"type":"job"`, `"tags":[]`, `"silenced":false`,
		`"pushedAt":"` + pushedString + `"`,
	}
	for _, x := range extra {
		key, _, _ := strings.Cut(x, ":")
		replaced := false
		for i, f := range fields {
			if strings.HasPrefix(f, key+":") {
				fields[i], replaced = x, true
			}
		}
		if !replaced {
			fields = append(fields, x)
		}
	}
	return "{" + strings.Join(fields, ",") + "}"
}

// pushed writes what RedisJobRepository::pushed writes when PHP
// dispatches the job (the state Go's records start from).
func (e *env) pushed(t *testing.T, uuid, queue, payload string) {
	t.Helper()
	_, err := e.rc.Pipelined(e.ctx, func(p redis.Pipeliner) error {
		p.Do(e.ctx, "zadd", prefix+"recent_jobs", "-"+pushedString, uuid)
		p.Do(e.ctx, "zadd", prefix+"pending_jobs", "-"+pushedString, uuid)
		p.HMSet(e.ctx, prefix+uuid, "id", uuid, "connection", "redis", "queue", queue, "name", `App\Jobs\SendMail`,
			"status", "pending", "payload", payload, "created_at", pushedString, "updated_at", pushedString)
		p.ExpireAt(e.ctx, prefix+uuid, time.Unix(pushedSec+3600, 0))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// hash is HGETALL of a Horizon key.
func (e *env) hash(t *testing.T, key string) map[string]string {
	t.Helper()
	h, err := e.rc.HGetAll(e.ctx, prefix+key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// expiresAt is the Unix second a key expires at (EXPIRETIME).
func (e *env) expiresAt(t *testing.T, key string) int64 {
	t.Helper()
	n, err := e.rc.Do(e.ctx, "expiretime", prefix+key).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// score is a member's score in a Horizon sorted set, "" when absent.
// Redis keeps a double and prints it with 17 digits: the score is given
// back as the shortest string of that double, the form PHP sent it in.
func (e *env) score(t *testing.T, key, member string) string {
	t.Helper()
	f, err := e.rc.ZScore(e.ctx, prefix+key, member).Result()
	if err == redis.Nil {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// wantHash compares a hash with the fields a test expects, all of them.
func wantHash(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: field %s = %q, want %q", what, k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected field %s = %q", what, k, got[k])
		}
	}
}

func minutes(m int) int64 { return at.Unix() + int64(m)*60 }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
