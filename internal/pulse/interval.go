package pulse

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// intervalUnits are CarbonInterval::fromString's units Go reads. Months
// and years are not: Carbon counts them in 4-week months, which is
// nobody's intent for a retention; they are an error asking for days.
var intervalUnits = map[string]time.Duration{
	"w": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond,
	"millisecond": time.Millisecond, "milliseconds": time.Millisecond,
}

// carbonInterval reads a duration as CarbonInterval::fromString does
// ("7 days", "1 week 2 days", "12h 30m").
func carbonInterval(s string) (time.Duration, error) {
	rest := strings.TrimSpace(s)
	var total time.Duration
	if rest == "" {
		return 0, fmt.Errorf("%q is not an interval", s)
	}
	for rest != "" {
		i := strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' })
		if i <= 0 {
			return 0, fmt.Errorf("%q is not an interval such as \"7 days\"", s)
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not an interval such as \"7 days\"", s)
		}
		rest = strings.TrimLeft(rest[i:], " ")
		j := strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsLetter(r) })
		if j < 0 {
			j = len(rest)
		}
		unit := rest[:j]
		d, ok := intervalUnits[strings.ToLower(unit)]
		if !ok || unit == "M" {
			return 0, fmt.Errorf("%q: unit %q is not one Go reads (weeks, days, hours, minutes, seconds, ms)", s, unit)
		}
		total += time.Duration(n * float64(d))
		rest = strings.TrimLeft(rest[j:], " ,")
	}
	return total, nil
}
