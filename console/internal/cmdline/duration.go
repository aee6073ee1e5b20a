package cmdline

import (
	"errors"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"
)

// durationValue is a flag value for a span of time, written as artisan
// writes it (30, 0.5: seconds) or as Go writes it (30s, 1m30s, 500ms).
// Every duration flag takes both forms.
type durationValue struct{ d time.Duration }

func (v *durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	v.d = d
	return nil
}

func (v *durationValue) String() string {
	if v == nil || v.d == 0 {
		return "0"
	}
	if v.d%time.Second == 0 {
		return strconv.FormatInt(int64(v.d/time.Second), 10)
	}
	return v.d.String()
}

var errDuration = errors.New("want seconds (30, 0.5) or a duration (30s, 1m30s, 500ms), not negative")

// parseDuration reads "30" and "0.5" as seconds, else a Go duration.
func parseDuration(s string) (time.Duration, error) {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if secs < 0 || secs > float64(1<<62)/float64(time.Second) {
			return 0, errDuration
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, errDuration
	}
	return d, nil
}

// DurationFlag is a flag taking durationValue's syntax.
func DurationFlag(name string, def time.Duration, usage string) *cli.GenericFlag {
	return &cli.GenericFlag{Name: name, Value: &durationValue{d: def}, Usage: usage + " (`DURATION`: 30 or 30s, 1m30s, 500ms)"}
}

// DurationOf reads a DurationFlag.
func DurationOf(c *cli.Context, name string) time.Duration {
	if v, ok := c.Generic(name).(*durationValue); ok {
		return v.d
	}
	return 0
}
