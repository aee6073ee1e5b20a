package redishorizon

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

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
	// started is StartTimingJob's stopwatch: when each job was reserved,
	// by reserved member (a job popped again has another one).
	started map[string]time.Time
	// trimmed is when each trim last ran (TrimRecentJobs and friends).
	trimmed [3]time.Time
}

// New is a recorder writing with rdb (a client of config('horizon.use')'s
// Redis server and database; keys are prefixed here, as phpredis's
// OPT_PREFIX does for PHP) for the queue connection named connection
// (the records' "connection").
func New(rdb redis.UniversalClient, connection string, cfg Config) *Recorder {
	return &Recorder{rdb: rdb, cfg: cfg, connection: connection, now: time.Now, started: map[string]time.Time{}}
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

// decoded is what the listeners read of a payload (JobPayload).
type decoded struct {
	id, name string
	tags     []string
	silenced bool
	retryOf  string
}

// decode is new JobPayload($payload): id() is the uuid, else the id.
func decode(payload string) (decoded, error) {
	var p struct {
		UUID        any `json:"uuid"`
		ID          any `json:"id"`
		DisplayName any `json:"displayName"`
		Tags        any `json:"tags"`
		Silenced    any `json:"silenced"`
		RetryOf     any `json:"retry_of"`
	}
	if err := json.Unmarshal([]byte(payload), &p); err != nil {
		return decoded{}, fmt.Errorf("redishorizon: the payload is not JSON: %w", err)
	}
	d := decoded{id: phpKey(p.UUID), name: phpKey(p.DisplayName), silenced: truthy(p.Silenced), retryOf: phpKey(p.RetryOf)}
	if d.id == "" {
		d.id = phpKey(p.ID)
	}
	if d.id == "" {
		return decoded{}, errors.New("redishorizon: the payload has no uuid or id to name its Horizon record")
	}
	switch t := p.Tags.(type) {
	case []any:
		for _, v := range t {
			d.tags = append(d.tags, phpKey(v))
		}
	case map[string]any:
		for _, v := range t {
			d.tags = append(d.tags, phpKey(v))
		}
	}
	return d, nil
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

// truthy is PHP's boolean conversion of a decoded JSON value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0
	case string:
		return x != "" && x != "0"
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return false
}

func (r *Recorder) key(name string) string { return r.cfg.Prefix + name }
