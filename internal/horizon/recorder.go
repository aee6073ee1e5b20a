package horizon

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/laraworker/laraworker/internal/phparray"
	jsonpayload "github.com/laraworker/laraworker/laravel/payload"
	"github.com/redis/go-redis/v9"
)

// Recorder writes Horizon's records of one queue connection's jobs. It
// is safe for concurrent use.
type Recorder struct {
	rdb        redis.UniversalClient
	cfg        Config
	connection string
	now        func() time.Time

	mu sync.Mutex
	// running are the jobs this recorder saw reserved, by reserved member
	// (a job popped again has another one): StartTimingJob's stopwatch,
	// and the payload read once.
	running map[string]running
	// trimmed is when each trim last ran (TrimRecentJobs and friends).
	trimmed [3]time.Time
}

// New is a recorder writing with rdb (a client of config('horizon.use')'s
// Redis server and database; keys are prefixed here, as phpredis's
// OPT_PREFIX does for PHP) for the queue connection named connection
// (the records' "connection").
func New(rdb redis.UniversalClient, connection string, cfg Config) *Recorder {
	return &Recorder{rdb: rdb, cfg: cfg, connection: connection, now: time.Now, running: map[string]running{}}
}

// SetClock replaces the clock (tests).
func (r *Recorder) SetClock(now func() time.Time) { r.now = now }

// Config is the configuration the recorder writes with.
func (r *Recorder) Config() Config { return r.cfg }

// Job is a job as Horizon's events carry it: its bare queue name and the
// payload the event holds (the reserved member for a reserved, released,
// finished or failed job; the member moved for a migrated one).
type Job struct {
	Queue   string
	Payload string
}

// running is a job reserved by this process.
type running struct {
	start time.Time
	d     decoded
}

// decoded is what the listeners read of a payload (JobPayload).
type decoded struct {
	id, name string
	tags     []string
	silenced bool
	retryOf  string
}

// decode is new JobPayload($payload): id() is the uuid, else the id.
func decode(payload string) (decoded, error) {
	m, err := jsonpayload.SplitObject([]byte(payload))
	if err != nil {
		return decoded{}, fmt.Errorf("redishorizon: the payload is not a JSON object: %w", err)
	}
	d := decoded{id: scalar(m, "uuid"), name: scalar(m, "displayName"), retryOf: scalar(m, "retry_of")}
	if d.id == "" {
		d.id = scalar(m, "id")
	}
	if d.id == "" {
		return decoded{}, errors.New("redishorizon: the payload has no uuid or id to name its Horizon record")
	}
	switch raw := string(m.Raw("silenced")); raw {
	case "", "false", "null":
	case "true":
		d.silenced = true
	default:
		d.silenced = phparray.Truthy(anyOf(m.Raw("silenced")))
	}
	// A list, or an object (a PHP list with holes, or any list after a
	// Redis release: cjson writes an empty one as {}): its values in
	// document order, the order PHP iterates the array in.
	var tags []any
	if raw := m.Raw("tags"); len(raw) > 0 && phparray.Unmarshal(raw, &tags) == nil {
		for _, v := range tags {
			d.tags = append(d.tags, phpKey(v))
		}
	}
	return d, nil
}

// scalar is a top-level member as PHP makes it a string ("" when absent,
// null or not a scalar).
func scalar(m jsonpayload.Members, key string) string {
	if s, ok := m.String(key); ok {
		return s
	}
	return phpKey(anyOf(m.Raw(key)))
}

// anyOf decodes a JSON value (nil when absent or invalid).
func anyOf(raw []byte) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}

// phpKey is a scalar as PHP makes it a string (an array key, a Redis
// argument): numbers as PHP prints them, true as "1", null and false as "".
func phpKey(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		if x == float64(int64(x)) && x > -1e15 && x < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return phpFloat(x)
	case bool:
		if x {
			return "1"
		}
	}
	return ""
}

func (r *Recorder) key(name string) string { return r.cfg.Prefix + name }
