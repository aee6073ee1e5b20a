package horizon

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/laraworker/laraworker/internal/phparray"
)

// This file reads one supervisor of config('horizon.environments') as
// Horizon's ProvisioningPlan gives it to the workers it starts (5.x,
// src/ProvisioningPlan.php, src/SupervisorOptions.php,
// src/QueueCommandString.php): horizon.defaults merged under each
// environment with array_replace_recursive, the first environment key
// that Str::is-matches the environment, the supervisor's keys camel-cased
// ("tries" is maxTries, "processes" maxProcesses), a queue or backoff list
// joined with ",", and SupervisorOptions' defaults for what is not set.

// Supervisor is one supervisor of the plan, as its horizon:work workers
// are started with it.
type Supervisor struct {
	// Environment is the horizon.environments key that matched; Key the
	// supervisor's key.
	Environment, Key string
	// Connection is the queue connection its workers run; Queue their
	// --queue ("" for the connection's default queue).
	Connection, Queue string
	// Balance, MinProcesses, BalanceCooldown, BalanceMaxShift and
	// AutoScalingStrategy are how Horizon shares MaxProcesses among the
	// queues.
	Balance             string
	MaxProcesses        int
	MinProcesses        int
	BalanceCooldown     int
	BalanceMaxShift     int
	AutoScalingStrategy string
	// The horizon:work options: --tries, --timeout, --memory (MB),
	// --backoff (an integer or "1,5,10"), --sleep and --rest (seconds),
	// --max-jobs, --max-time (seconds), --force, --name.
	MaxTries, Timeout, Memory int
	Backoff                   string
	Sleep, Rest               float64
	MaxJobs, MaxTime          int
	Force                     bool
	WorkersName               string
	// Nice is the supervisor's process priority (proc_nice).
	Nice int
}

// PlannedSupervisor resolves supervisor key for environment from
// config('horizon') as PHP's config() returns it: "environments" and
// "defaults", and "environment_keys", the environments' keys in the
// config's order (JSON objects lose it; the first match wins).
func PlannedSupervisor(horizon map[string]any, environment, key string) (Supervisor, error) {
	envs, keys, ordered, err := environments(horizon)
	if err != nil {
		return Supervisor{}, err
	}
	envKey, err := matchEnvironment(keys, ordered, environment)
	if err != nil {
		return Supervisor{}, err
	}
	defaults, _ := asArray(horizon["defaults"])
	plan, _ := asArray(replaceRecursive(defaults, envs[envKey]))
	raw, ok := plan[key]
	if !ok {
		names := make([]string, 0, len(plan))
		for k := range plan {
			names = append(names, k)
		}
		slices.Sort(names)
		return Supervisor{}, fmt.Errorf("redishorizon: horizon.environments.%s (with horizon.defaults) has no supervisor %q; it has %s", envKey, key, orNone(names))
	}
	opts, ok := asArray(raw)
	if !ok {
		return Supervisor{}, fmt.Errorf("redishorizon: horizon.environments.%s.%s is not an array of options", envKey, key)
	}
	s, err := supervisorOptions(opts, envKey+"."+key)
	if err != nil {
		return Supervisor{}, err
	}
	s.Environment, s.Key = envKey, key
	return s, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// environments is horizon.environments and its keys, in the config's
// order when it was read (ordered).
func environments(horizon map[string]any) (envs map[string]any, keys []string, ordered bool, err error) {
	envs, ok := asArray(horizon["environments"])
	if !ok || len(envs) == 0 {
		return nil, nil, false, fmt.Errorf("redishorizon: config('horizon.environments') is empty or was not read: a supervisor of it cannot be taken")
	}
	if list, ok := horizon["environment_keys"].([]any); ok {
		for _, k := range list {
			if s := phpKey(k); s != "" {
				if _, ok := envs[s]; ok {
					keys = append(keys, s)
				}
			}
		}
	}
	if len(keys) == len(envs) {
		return envs, keys, true, nil
	}
	// Read without their order: matchEnvironment refuses a choice the
	// order would decide.
	keys = keys[:0]
	for k := range envs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return envs, keys, false, nil
}

// matchEnvironment is ProvisioningPlan::deploy's choice: the first key
// that Str::is(key, environment) matches. Without the keys' order,
// several keys matching are refused: which one PHP takes is not known.
func matchEnvironment(keys []string, ordered bool, environment string) (string, error) {
	var matches []string
	for _, k := range keys {
		if strIs(k, environment) {
			matches = append(matches, k)
		}
	}
	switch {
	case len(matches) == 0:
		return "", fmt.Errorf("redishorizon: no key of horizon.environments (%s) matches the environment %q (horizon.env, else app.env; --horizon-environment)", strings.Join(keys, ", "), environment)
	case !ordered && len(matches) > 1:
		return "", fmt.Errorf("redishorizon: several keys of horizon.environments (%s) match the environment %q and their order was not read: run where the app's php is", strings.Join(matches, ", "), environment)
	}
	return matches[0], nil
}

// strIs is Str::is(pattern, value): equal, or the pattern with each "*"
// matching any run of characters (but a newline), anchored at both ends.
func strIs(pattern, value string) bool {
	if pattern == value {
		return true
	}
	re, err := regexp.Compile(`^(?:` + strings.ReplaceAll(regexp.QuoteMeta(pattern), `\*`, `.*`) + `)\z`)
	return err == nil && re.MatchString(value)
}

// asArray is a PHP array decoded from JSON as a map: an object, or a list
// (keys "0", "1"...).
func asArray(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case []any:
		m := make(map[string]any, len(x))
		for i, e := range x {
			m[strconv.Itoa(i)] = e
		}
		return m, true
	}
	return nil, false
}

// replaceRecursive is array_replace_recursive(base, over): over's values
// replace base's key by key, and where both are arrays the two are merged
// the same way (a list by index: ["a","b"] under ["c"] is ["c","b"]).
func replaceRecursive(base, over any) any {
	b, bok := asArray(base)
	o, ook := asArray(over)
	if !ook {
		return over
	}
	if !bok {
		return over
	}
	out := make(map[string]any, len(b)+len(o))
	for k, v := range b {
		out[k] = v
	}
	for k, v := range o {
		if bv, ok := out[k]; ok {
			if _, isArr := asArray(bv); isArr {
				if _, overArr := asArray(v); overArr {
					out[k] = replaceRecursive(bv, v)
					continue
				}
			}
		}
		out[k] = v
	}
	if list, ok := asList(out); ok {
		return list
	}
	return out
}

// asList is a map with keys 0..n-1 as a list, for implode.
func asList(m map[string]any) ([]any, bool) {
	list := make([]any, len(m))
	for k, v := range m {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(m) || strconv.Itoa(i) != k {
			return nil, false
		}
		list[i] = v
	}
	return list, true
}

// camel is ProvisioningPlan::convert's key: tries and processes renamed,
// then Str::camel.
func camel(key string) string {
	switch key {
	case "tries":
		key = "max_tries"
	case "processes":
		key = "max_processes"
	}
	words := strings.Fields(strings.NewReplacer("-", " ", "_", " ").Replace(key))
	for i, w := range words {
		if i == 0 {
			words[i] = strings.ToLower(w[:1]) + w[1:]
		} else {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, "")
}

// supervisorOptions converts the options (SupervisorOptions::fromArray
// over the constructor's defaults).
func supervisorOptions(raw map[string]any, where string) (Supervisor, error) {
	opts := map[string]any{}
	from := map[string]string{}
	for k, v := range raw {
		c := camel(k)
		if prev, dup := from[c]; dup && fmt.Sprint(opts[c]) != fmt.Sprint(v) {
			return Supervisor{}, fmt.Errorf("redishorizon: horizon.environments.%s sets both %s and %s, which Horizon reads as one option", where, prev, k)
		}
		opts[c], from[c] = v, k
	}
	s := Supervisor{Balance: "off", MaxProcesses: 1, MinProcesses: 1, BalanceCooldown: 3, BalanceMaxShift: 1,
		AutoScalingStrategy: "time", Timeout: 60, Memory: 128, Backoff: "0", Sleep: 3, WorkersName: "default"}
	r := optionReader{opts: opts, where: where}
	s.Connection = r.text("connection")
	if _, ok := opts["connection"]; !ok || s.Connection == "" {
		return Supervisor{}, fmt.Errorf("redishorizon: horizon.environments.%s has no connection (SupervisorOptions::fromArray requires it)", where)
	}
	s.Queue = r.list("queue", "")
	s.Backoff = r.list("backoff", s.Backoff)
	s.Balance = r.textOr("balance", s.Balance)
	s.AutoScalingStrategy = r.textOr("autoScalingStrategy", s.AutoScalingStrategy)
	s.WorkersName = r.textOr("workersName", s.WorkersName)
	r.integer("maxProcesses", &s.MaxProcesses)
	r.integer("minProcesses", &s.MinProcesses)
	r.integer("balanceCooldown", &s.BalanceCooldown)
	r.integer("balanceMaxShift", &s.BalanceMaxShift)
	r.integer("maxTries", &s.MaxTries)
	r.integer("timeout", &s.Timeout)
	r.integer("memory", &s.Memory)
	r.integer("maxJobs", &s.MaxJobs)
	r.integer("maxTime", &s.MaxTime)
	r.integer("nice", &s.Nice)
	r.seconds("sleep", &s.Sleep)
	r.seconds("rest", &s.Rest)
	if v, ok := opts["force"]; ok {
		s.Force = phparray.Truthy(v)
	}
	if r.err == nil && s.MinProcesses < 1 {
		// ProvisioningPlan::convert throws for it.
		r.err = fmt.Errorf("redishorizon: the value of [%s.minProcesses] must be greater than 0", where)
	}
	return s, r.err
}

// optionReader reads typed options, keeping the first error.
type optionReader struct {
	opts  map[string]any
	where string
	err   error
}

func (r *optionReader) fail(key string, v any, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("redishorizon: horizon.environments.%s.%s is %v, not %s", r.where, key, v, want)
	}
}

// text is a scalar option as PHP makes it a string.
func (r *optionReader) text(key string) string { return phpKey(r.opts[key]) }

func (r *optionReader) textOr(key, def string) string {
	if v, ok := r.opts[key]; ok && v != nil {
		if _, isArr := asArray(v); isArr {
			r.fail(key, v, "a string")
			return def
		}
		return phpKey(v)
	}
	return def
}

// list is a scalar, or a list joined with "," (implode).
func (r *optionReader) list(key, def string) string {
	v, ok := r.opts[key]
	if !ok {
		return def
	}
	m, isArr := asArray(v)
	if !isArr {
		return phpKey(v)
	}
	items, isList := asList(m)
	if !isList {
		r.fail(key, v, "a list (its keys' order is not known here)")
		return def
	}
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = phpKey(it)
	}
	return strings.Join(parts, ",")
}

// integer is a whole number (a JSON number or a numeric string).
func (r *optionReader) integer(key string, dst *int) {
	v, ok := r.opts[key]
	if !ok || v == nil {
		return
	}
	f, ok := numeric(v)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<31 {
		r.fail(key, v, "a whole number")
		return
	}
	*dst = int(f)
}

// seconds is a number of seconds, fractions allowed (--sleep, --rest).
func (r *optionReader) seconds(key string, dst *float64) {
	v, ok := r.opts[key]
	if !ok || v == nil {
		return
	}
	f, ok := numeric(v)
	if !ok || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		r.fail(key, v, "a number of seconds")
		return
	}
	*dst = f
}

// numeric is a JSON number, a numeric string or a bool, as PHP's
// arithmetic takes it.
func numeric(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}
