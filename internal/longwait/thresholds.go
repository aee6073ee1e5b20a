package longwait

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultThreshold is Horizon's wait for a queue its waits do not name.
const DefaultThreshold = 60 * time.Second

// Thresholds are the waits per "connection:queue" (Horizon's waits): a
// queue not named waits DefaultThreshold, one set to 0 is not checked.
type Thresholds map[string]time.Duration

// Of is the threshold of connection:queue and whether it is checked.
func (t Thresholds) Of(connection, queue string) (time.Duration, bool) {
	d, named := t[connection+":"+queue]
	if !named {
		return DefaultThreshold, true
	}
	return d, d > 0
}

// Queues are the queues of connection the thresholds name (sorted).
func (t Thresholds) Queues(connection string) []string {
	var out []string
	for k := range t {
		if c, q, ok := strings.Cut(k, ":"); ok && c == connection {
			out = append(out, q)
		}
	}
	sort.Strings(out)
	return out
}

// Others are the keys naming another connection than connection.
func (t Thresholds) Others(connection string) []string {
	var out []string
	for k := range t {
		if c, _, _ := strings.Cut(k, ":"); c != connection {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// ParseFlags reads --long-wait values: CONNECTION:QUEUE=SECONDS, the
// seconds as Horizon writes them or a Go duration ("90", "1m30s").
func ParseFlags(values []string) (Thresholds, error) {
	t := Thresholds{}
	for _, v := range values {
		key, wait, ok := strings.Cut(v, "=")
		if !ok || !validKey(key) {
			return nil, fmt.Errorf("--long-wait %q: want CONNECTION:QUEUE=SECONDS, as redis:default=60", v)
		}
		d, err := seconds(wait)
		if err != nil {
			return nil, fmt.Errorf("--long-wait %q: %v", v, err)
		}
		t[key] = d
	}
	return t, nil
}

// ReadFile reads a JSON object in Horizon's waits shape:
// {"redis:default": 60, "database:emails": 0}.
func ReadFile(path string) (Thresholds, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--long-wait-file: %w", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("--long-wait-file %s: want a JSON object of \"connection:queue\": seconds: %v", path, err)
	}
	t, err := fromMap(raw)
	if err != nil {
		return nil, fmt.Errorf("--long-wait-file %s: %v", path, err)
	}
	return t, nil
}

// FromHorizon reads config('horizon.waits') as the app's PHP resolved it
// (an env() value is a string).
func FromHorizon(waits map[string]any) (Thresholds, error) {
	t, err := fromMap(waits)
	if err != nil {
		return nil, fmt.Errorf("horizon.waits: %v", err)
	}
	return t, nil
}

func fromMap(raw map[string]any) (Thresholds, error) {
	t := Thresholds{}
	for key, v := range raw {
		if !validKey(key) {
			return nil, fmt.Errorf("%q: want \"connection:queue\"", key)
		}
		var d time.Duration
		var err error
		switch x := v.(type) {
		case float64:
			d, err = seconds(strconv.FormatFloat(x, 'f', -1, 64))
		case string:
			d, err = seconds(x)
		default:
			err = fmt.Errorf("%v is not a number of seconds", v)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", key, err)
		}
		t[key] = d
	}
	return t, nil
}

func validKey(key string) bool {
	c, q, ok := strings.Cut(key, ":")
	return ok && c != "" && q != ""
}

// seconds reads whole or fractional seconds, or a Go duration.
func seconds(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 {
			return 0, fmt.Errorf("%s: a wait cannot be negative", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a number of seconds", s)
	}
	return d, nil
}
