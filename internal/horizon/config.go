package horizon

import (
	"fmt"
	"strconv"
	"strings"
)

// Config is what the records need of config('horizon').
type Config struct {
	// Prefix is horizon.prefix, "horizon:" when empty (Horizon::use).
	Prefix string
	// Use is horizon.use: the Redis connection Horizon's keys live on
	// ("default").
	Use string
	// Trim is horizon.trim, in minutes.
	Trim Trim
	// Silenced is horizon.silenced: classes whose completed jobs go to
	// silenced_jobs (read from the payload's "silenced" when Horizon
	// pushed it; kept for jobs Go pushes).
	Silenced []string
}

// Trim is horizon.trim: how many minutes each kind of record is kept
// (FromLaravel and Defaults fill in Horizon's defaults).
type Trim struct {
	Recent, Pending, Completed, RecentFailed, Failed, Monitored int
	// FailedTags is what StoreTagsForFailedJob keeps the failed:<tag>
	// sets: horizon.trim.failed, or 2880 when unset (its own default,
	// which differs from the repository's 10080).
	FailedTags int
}

// Defaults of RedisJobRepository's constructor (config('horizon.trim.x',
// default)).
const (
	defaultRecent     = 60
	defaultPending    = 60
	defaultCompleted  = 60
	defaultFailed     = 10080
	defaultMonitored  = 10080
	defaultFailedTags = 2880
	defaultPrefix     = "horizon:"
)

// FromLaravel reads config('horizon') as PHP's config() returns it
// (decoded from JSON): prefix, use, trim and silenced. A nil map is
// Horizon's defaults.
func FromLaravel(horizon map[string]any) (Config, error) {
	c := Config{Prefix: str(horizon["prefix"]), Use: str(horizon["use"])}
	if c.Prefix == "" {
		c.Prefix = defaultPrefix
	}
	if c.Use == "" {
		c.Use = "default"
	}
	trim, _ := horizon["trim"].(map[string]any)
	var err error
	minutes := func(key string, def int) int {
		v, ok := trim[key]
		if !ok || v == nil || err != nil {
			return def
		}
		n, ok := number(v)
		if !ok || n < 0 {
			err = fmt.Errorf("redishorizon: horizon.trim.%s is %v, not a number of minutes", key, v)
			return def
		}
		return n
	}
	c.Trim.Recent = minutes("recent", defaultRecent)
	c.Trim.Pending = minutes("pending", defaultPending)
	c.Trim.Completed = minutes("completed", defaultCompleted)
	c.Trim.Failed = minutes("failed", defaultFailed)
	c.Trim.RecentFailed = minutes("recent_failed", c.Trim.Failed)
	c.Trim.Monitored = minutes("monitored", defaultMonitored)
	c.Trim.FailedTags = minutes("failed", defaultFailedTags)
	switch s := horizon["silenced"].(type) {
	case []any:
		for _, v := range s {
			if name := str(v); name != "" {
				c.Silenced = append(c.Silenced, name)
			}
		}
	case map[string]any:
		for _, v := range s {
			if name := str(v); name != "" {
				c.Silenced = append(c.Silenced, name)
			}
		}
	}
	return c, err
}

// Defaults is Horizon's configuration when config/horizon.php sets
// nothing (the prefix then is "horizon:"; an app's published config says
// APP_NAME's slug + "_horizon:").
func Defaults() Config {
	c, _ := FromLaravel(nil)
	return c
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

// number is a config integer: a JSON number or a numeric string (env()
// values), as PHP's arithmetic takes it.
func number(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		return int(x), true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return int(f), err == nil
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}
