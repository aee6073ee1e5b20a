package pulse

import (
	"errors"
	"fmt"
	"time"

	"github.com/laraworker/laraworker/laravel/appconfig"
)

// Settings are what Pulse's configuration says Go records and where.
type Settings struct {
	// Queues and SlowJobs are the recorders; nil when the app does not
	// register one.
	Queues   *Sampled
	SlowJobs *SlowJobs
	// Ingest is pulse.ingest.driver: IngestStorage or IngestRedis.
	Ingest string
	// Buffer is pulse.ingest.buffer: a batch is ingested once more
	// entries wait.
	Buffer int
	// TrimChances out of TrimOutOf is pulse.ingest.trim.lottery: the odds
	// that an ingest trims.
	TrimChances, TrimOutOf int
	// StreamKeep is pulse.ingest.trim.keep for the Redis stream: MaxLen
	// entries when set, else entries younger than Age.
	StreamKeep Keep
	// StorageKeep is how long the tables keep entries
	// (pulse.storage.trim.keep, at most 7 days, as Pulse caps it).
	StorageKeep time.Duration
	// Chunk is pulse.storage.database.chunk: rows per statement.
	Chunk int
	// RedisConnection is pulse.ingest.redis.connection ("default" when
	// unset) and Stream the stream's key (the global Redis prefix, then
	// laravel:pulse:ingest).
	RedisConnection, Stream string
}

// Ingest drivers Go writes to.
const (
	IngestStorage = "storage"
	IngestRedis   = "redis"
)

// Keep is how much of the Redis stream a trim keeps: MaxLen entries, or
// those younger than Age.
type Keep struct {
	MaxLen int64
	Age    time.Duration
}

// Sampled is a recorder's sample rate and ignore patterns.
type Sampled struct {
	SampleRate float64
	Ignore     []phpRegexp
}

// ignored is Pulse's shouldIgnore: a pattern matches the name.
func (s *Sampled) ignored(name string) bool {
	for _, re := range s.Ignore {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// SlowJobs is the Slow Jobs recorder's settings.
type SlowJobs struct {
	Sampled
	// Threshold is the default threshold; Patterns the per-name ones, in
	// the config's order (the first match wins).
	Threshold time.Duration
	Patterns  []patternThreshold
}

type patternThreshold struct {
	re        phpRegexp
	threshold time.Duration
}

// threshold is Pulse's threshold for a job name.
func (s *SlowJobs) threshold(name string) time.Duration {
	for _, p := range s.Patterns {
		if p.re.MatchString(name) {
			return p.threshold
		}
	}
	return s.Threshold
}

// defaultThreshold is Pulse's when none is configured (ms).
const defaultThreshold = 1000 * time.Millisecond

// FromLaravel reads the app's Pulse configuration. active is false when
// Pulse would record nothing for a job (not registered, disabled, neither
// recorder registered, the null ingest); an error names the setting Go
// cannot honour.
func FromLaravel(p *appconfig.PulseConfig) (s Settings, active bool, err error) {
	if p == nil || !p.Registered || !p.Enabled {
		return Settings{}, false, nil
	}
	driver := str(p.Ingest["driver"])
	switch driver {
	case "", "null":
		return Settings{}, false, nil
	case IngestStorage, IngestRedis:
	default:
		return Settings{}, false, fmt.Errorf("pulse.ingest.driver is %q: Pulse knows storage, redis and null", driver)
	}
	s = Settings{Ingest: driver}
	if p.Queues != nil {
		if s.Queues, err = sampled(p.Queues, "Queues"); err != nil {
			return Settings{}, false, err
		}
	}
	if p.SlowJobs != nil {
		if s.SlowJobs, err = slowJobs(p.SlowJobs); err != nil {
			return Settings{}, false, err
		}
	}
	if s.Queues == nil && s.SlowJobs == nil {
		return Settings{}, false, nil
	}
	if err := s.readIngest(p); err != nil {
		return Settings{}, false, err
	}
	return s, true, nil
}

// readIngest reads the buffer, the trim and where the entries go.
func (s *Settings) readIngest(p *appconfig.PulseConfig) error {
	buffer, err := intSetting(p.Ingest["buffer"], 5000, "pulse.ingest.buffer")
	if err != nil {
		return err
	}
	s.Buffer = max(buffer, 1)
	if s.TrimChances, s.TrimOutOf, err = lottery(p.Ingest["trim_lottery"]); err != nil {
		return err
	}
	if s.StreamKeep, err = streamKeep(p.Ingest["trim_keep"]); err != nil {
		return err
	}
	if s.StorageKeep, err = storageKeep(p.Storage["trim_keep"]); err != nil {
		return err
	}
	chunk, err := intSetting(p.Storage["chunk"], 1000, "pulse.storage.database.chunk")
	if err != nil {
		return err
	}
	s.Chunk = max(chunk, 1)
	s.RedisConnection = orDefault(str(p.Ingest["redis_connection"]), "default")
	s.Stream = p.RedisPrefix + "laravel:pulse:ingest"
	if d := str(p.Storage["driver"]); s.Ingest == IngestStorage && d != "" && d != "database" {
		return fmt.Errorf("pulse.storage.driver is %q: Pulse stores in its database tables only (database)", d)
	}
	return nil
}

// sampled reads a recorder's sample_rate and ignore list.
func sampled(r map[string]any, recorder string) (*Sampled, error) {
	where := "pulse.recorders." + recorder
	rate, err := phpNumber(r["sample_rate"], where+".sample_rate")
	if err != nil {
		return nil, err
	}
	s := &Sampled{SampleRate: rate}
	list, _ := r["ignore"].([]any)
	for i, v := range list {
		pattern, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s.ignore[%d] is %v: want a regular expression", where, i, v)
		}
		re, err := compilePHPRegexp(pattern)
		if err != nil {
			return nil, fmt.Errorf("%s.ignore[%d]: %v", where, i, err)
		}
		s.Ignore = append(s.Ignore, re)
	}
	return s, nil
}

// slowJobs reads the Slow Jobs recorder: its threshold is a number of ms
// or, as Pulse 1.x reads it since, patterns and a default.
func slowJobs(r map[string]any) (*SlowJobs, error) {
	base, err := sampled(r, "SlowJobs")
	if err != nil {
		return nil, err
	}
	s := &SlowJobs{Sampled: *base, Threshold: defaultThreshold}
	pairs, isList := r["threshold"].([]any)
	if !isList {
		if r["threshold"] != nil {
			ms, err := phpNumber(r["threshold"], "pulse.recorders.SlowJobs.threshold")
			if err != nil {
				return nil, err
			}
			s.Threshold = millis(ms)
		}
		return s, nil
	}
	for _, pair := range pairs {
		m, _ := pair.(map[string]any)
		pattern := str(m["pattern"])
		ms, err := phpNumber(m["ms"], "pulse.recorders.SlowJobs.threshold."+pattern)
		if err != nil {
			return nil, err
		}
		if pattern == "default" {
			s.Threshold = millis(ms)
			continue
		}
		re, err := compilePHPRegexp(pattern)
		if err != nil {
			return nil, fmt.Errorf("pulse.recorders.SlowJobs.threshold: %v", err)
		}
		s.Patterns = append(s.Patterns, patternThreshold{re: re, threshold: millis(ms)})
	}
	return s, nil
}

func millis(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// lottery reads pulse.ingest.trim.lottery: [chances, out of].
func lottery(v any) (int, int, error) {
	if v == nil {
		return 1, 1000, nil
	}
	odds, ok := v.([]any)
	if !ok || len(odds) != 2 {
		return 0, 0, fmt.Errorf("pulse.ingest.trim.lottery is %v: want [chances, out of]", v)
	}
	chances, err := intSetting(odds[0], 1, "pulse.ingest.trim.lottery[0]")
	if err != nil {
		return 0, 0, err
	}
	outOf, err := intSetting(odds[1], 1000, "pulse.ingest.trim.lottery[1]")
	if err != nil {
		return 0, 0, err
	}
	if outOf < 1 {
		return 0, 0, errors.New("pulse.ingest.trim.lottery: out of must be at least 1")
	}
	return chances, outOf, nil
}

// streamKeep reads pulse.ingest.trim.keep: an int keeps that many
// entries (MAXLEN), an interval keeps entries that young (MINID).
func streamKeep(v any) (Keep, error) {
	if n, ok := v.(float64); ok {
		return Keep{MaxLen: int64(n)}, nil
	}
	age, err := carbonInterval(orDefault(str(v), "7 days"))
	if err != nil {
		return Keep{}, fmt.Errorf("pulse.ingest.trim.keep: %v", err)
	}
	return Keep{Age: age}, nil
}

// storageKeep reads pulse.storage.trim.keep, capped at 7 days as Pulse
// caps it.
func storageKeep(v any) (time.Duration, error) {
	week := 7 * 24 * time.Hour
	age, err := carbonInterval(orDefault(str(v), "7 days"))
	if err != nil {
		return 0, fmt.Errorf("pulse.storage.trim.keep: %v", err)
	}
	return min(age, week), nil
}

func intSetting(v any, def int, where string) (int, error) {
	if v == nil {
		return def, nil
	}
	f, err := phpNumber(v, where)
	return int(f), err
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return fmt.Sprint(x)
	}
	return ""
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
