package horizon

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/phpjson"
	"github.com/redis/go-redis/v9"
)

// This file writes the records Horizon's process lists are made of, for
// one Go worker: a master supervisor record and one supervisor record,
// as Horizon's RedisMasterSupervisorRepository::update and
// RedisSupervisorRepository::update write them (5.x; the same fields,
// expiry and scores in v5.29.1 and in the 5.x branch after its Redis
// Cluster support, PR #1760). The dashboard's Supervisors cards,
// horizon:list, horizon:supervisors and horizon:status read them, and
// horizon:pause, horizon:continue and horizon:terminate signal the pid
// they hold (docs/HORIZON.md).

// Expiries and windows of Horizon's repositories: a master hash lives 15
// s, a supervisor hash 30 s; names() lists the masters scored in the last
// 14 s and the supervisors in the last 29 s; ExpireSupervisors removes
// members older than 14 s from both sets.
const (
	masterTTL     = 15 * time.Second
	supervisorTTL = 30 * time.Second
	expiredAfter  = 14
)

// ProcessConfig is what one Go worker's records say.
type ProcessConfig struct {
	// Basename is MasterSupervisor::basename(): Str::slug(gethostname()),
	// or what the app's Horizon::$nameResolver returns. horizon:pause and
	// its siblings signal only the masters whose name starts with it.
	Basename string
	// Environment is the master record's "environment".
	Environment string
	// Supervisor is the supervisor's key, the part after "<master>:" (a
	// key of horizon.environments for --horizon-supervisor).
	Supervisor string
	// PID is the process Horizon's commands signal: the worker's own.
	PID int
	// Options are the supervisor record's options; its Name is set here.
	Options SupervisorOptions
}

// SupervisorOptions is SupervisorOptions::toArray as Horizon records it
// in a supervisor's "options", with laraworker's mark added.
type SupervisorOptions struct {
	Balance, Connection, Queue string
	// Backoff is an integer or Laravel's "1,5,10" list.
	Backoff                              string
	Force                                bool
	MaxProcesses, MinProcesses, MaxTries int
	MaxTime, MaxJobs, Memory, Nice       int
	Name, WorkersName                    string
	Sleep                                float64
	Timeout, BalanceCooldown             int
	BalanceMaxShift, ParentID            int
	Rest                                 float64
	AutoScalingStrategy                  string
	// Laraworker marks the record as a Go worker's: laraworker's version.
	Laraworker string
}

// Processes writes and removes one Go worker's records. Create it with
// Recorder.Processes.
type Processes struct {
	rdb        redis.UniversalClient
	prefix     string
	cfg        ProcessConfig
	master     string
	supervisor string
	// processes and options are the supervisor record's JSON, made once.
	processes, options string
	now                func() time.Time
}

// Processes makes the records of one Go worker on the recorder's Redis
// connection and prefix. The master's name is Basename + "-laraworker-" +
// four random characters (a PHP master's is Basename + "-" + four), the
// supervisor's "<master>:<Supervisor>", as ProvisioningPlan names them.
func (r *Recorder) Processes(cfg ProcessConfig) (*Processes, error) {
	if cfg.Basename == "" || strings.Contains(cfg.Basename, ":") {
		return nil, fmt.Errorf("redishorizon: the master's basename %q must be a non-empty slug", cfg.Basename)
	}
	if cfg.Supervisor == "" {
		return nil, errors.New("redishorizon: the supervisor needs a name")
	}
	if cfg.Options.Queue == "" || cfg.Options.Connection == "" {
		// Horizon's dashboard calls options.queue.replace(): a record
		// without a queue string breaks its page.
		return nil, errors.New("redishorizon: the supervisor record needs its connection and queue")
	}
	p := &Processes{rdb: r.rdb, prefix: r.cfg.Prefix, cfg: cfg, now: r.now}
	p.master = cfg.Basename + "-laraworker-" + token()
	p.supervisor = p.master + ":" + cfg.Supervisor
	p.cfg.Options.Name = p.supervisor
	var err error
	if p.processes, err = processesJSON(cfg.Options.Connection+":"+cfg.Options.Queue, cfg.Options.MaxProcesses); err != nil {
		return nil, err
	}
	if p.options, err = p.cfg.Options.json(); err != nil {
		return nil, err
	}
	return p, nil
}

// MasterName and SupervisorName are the records' names.
func (p *Processes) MasterName() string     { return p.master }
func (p *Processes) SupervisorName() string { return p.supervisor }

// token is Str::random(4)'s alphabet: letters and digits.
func token() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func (p *Processes) key(name string) string { return p.prefix + name }

// Persist writes both records as one MULTI/EXEC (Horizon pipelines them,
// or runs them in a transaction on a phpredis cluster; on a cluster every
// key shares the prefix's hash tag): the master's hash (15 s) and its
// place in "masters", the supervisor's hash (30 s) and its place in
// "supervisors", both scored with the Unix second, then the members older
// than 14 s removed from both sets, as a master's ExpireSupervisors does.
func (p *Processes) Persist(ctx context.Context, paused bool) error {
	status := "running"
	if paused {
		status = "paused"
	}
	supervisors, err := phpjson.StringList([]string{p.supervisor}, 0)
	if err != nil {
		return err
	}
	now := p.now().Unix()
	pid := strconv.Itoa(p.cfg.PID)
	stale := strconv.FormatInt(now-expiredAfter, 10)
	_, err = p.rdb.TxPipelined(ctx, func(tx redis.Pipeliner) error {
		tx.HSet(ctx, p.key("master:"+p.master), "name", p.master, "environment", p.cfg.Environment,
			"pid", pid, "status", status, "supervisors", supervisors)
		tx.ZAdd(ctx, p.key("masters"), redis.Z{Score: float64(now), Member: p.master})
		tx.Expire(ctx, p.key("master:"+p.master), masterTTL)
		tx.HSet(ctx, p.key("supervisor:"+p.supervisor), "name", p.supervisor, "master", p.master,
			"pid", pid, "status", status, "processes", p.processes, "options", p.options)
		tx.ZAdd(ctx, p.key("supervisors"), redis.Z{Score: float64(now), Member: p.supervisor})
		tx.Expire(ctx, p.key("supervisor:"+p.supervisor), supervisorTTL)
		tx.ZRemRangeByScore(ctx, p.key("masters"), "-inf", stale)
		tx.ZRemRangeByScore(ctx, p.key("supervisors"), "-inf", stale)
		return nil
	})
	return err
}

// Forget removes both records, as a terminating supervisor and master do
// (RedisSupervisorRepository::forget, RedisMasterSupervisorRepository::
// forget): the dashboard stops listing the worker at once.
func (p *Processes) Forget(ctx context.Context) error {
	_, err := p.rdb.TxPipelined(ctx, func(tx redis.Pipeliner) error {
		tx.Del(ctx, p.key("supervisor:"+p.supervisor))
		tx.ZRem(ctx, p.key("supervisors"), p.supervisor)
		tx.Del(ctx, p.key("master:"+p.master))
		tx.ZRem(ctx, p.key("masters"), p.master)
		return nil
	})
	return err
}

// Command is one entry of the supervisor's command list, as
// RedisHorizonCommandQueue::push writes it: {"command": FQCN, "options":
// {...}}.
type Command struct {
	Command string
	Options map[string]any
}

// Horizon's supervisor commands (Laravel\Horizon\SupervisorCommands).
const (
	CommandPause     = `Laravel\Horizon\SupervisorCommands\Pause`
	CommandContinue  = `Laravel\Horizon\SupervisorCommands\ContinueWorking`
	CommandTerminate = `Laravel\Horizon\SupervisorCommands\Terminate`
	CommandRestart   = `Laravel\Horizon\SupervisorCommands\Restart`
	CommandScale     = `Laravel\Horizon\SupervisorCommands\Scale`
	CommandBalance   = `Laravel\Horizon\SupervisorCommands\Balance`
)

// TakeCommands reads and empties the supervisor's list, commands:<name>,
// in one MULTI/EXEC (Horizon's LLEN, then LRANGE and LTRIM, can drop a
// command pushed in between). Entries that are not such JSON objects are
// left out and named in a *BadCommandsError; the others are returned with
// it.
func (p *Processes) TakeCommands(ctx context.Context) ([]Command, error) {
	var lr *redis.StringSliceCmd
	key := p.key("commands:" + p.supervisor)
	_, err := p.rdb.TxPipelined(ctx, func(tx redis.Pipeliner) error {
		lr = tx.LRange(ctx, key, 0, -1)
		tx.Del(ctx, key)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Command
	var bad BadCommandsError
	for _, raw := range lr.Val() {
		c, err := decodeCommand(raw)
		if err != nil {
			bad.Errs = append(bad.Errs, err)
			continue
		}
		out = append(out, c)
	}
	if len(bad.Errs) > 0 {
		return out, &bad
	}
	return out, nil
}

// BadCommandsError names the entries of a command list that were not
// commands (they are removed from the list, as Horizon's supervisor
// removes what it fails on).
type BadCommandsError struct{ Errs []error }

func (e *BadCommandsError) Error() string { return errors.Join(e.Errs...).Error() }

// decodeCommand reads one entry; "options" is an object, or [] for none
// (PHP's json_encode of an empty array).
func decodeCommand(raw string) (Command, error) {
	var m struct {
		Command string          `json:"command"`
		Options json.RawMessage `json:"options"`
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m.Command == "" {
		return Command{}, fmt.Errorf("redishorizon: a supervisor command that is not {\"command\": ..., \"options\": ...}: %.200q", raw)
	}
	c := Command{Command: m.Command, Options: map[string]any{}}
	if len(m.Options) > 0 && m.Options[0] == '{' {
		if err := json.Unmarshal(m.Options, &c.Options); err != nil {
			return Command{}, fmt.Errorf("redishorizon: supervisor command %s: its options: %w", m.Command, err)
		}
	}
	return c, nil
}

// processesJSON is the supervisor's "processes": json_encode of
// [connection:queue => count], one pool over the queue list.
func processesJSON(pool string, count int) (string, error) {
	b := append(make([]byte, 0, 64), '{')
	b, err := phpjson.AppendString(b, pool, 0)
	if err != nil {
		return "", err
	}
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(count), 10)
	return string(append(b, '}')), nil
}

// json is json_encode(SupervisorOptions::toArray()) (its keys in its
// order), then "laraworker".
func (o SupervisorOptions) json() (string, error) {
	w := &objectWriter{b: append(make([]byte, 0, 512), '{')}
	w.str("balance", o.Balance)
	w.str("connection", o.Connection)
	w.str("queue", o.Queue)
	w.numberOrString("backoff", o.Backoff)
	w.boolean("force", o.Force)
	w.integer("maxProcesses", o.MaxProcesses)
	w.integer("minProcesses", o.MinProcesses)
	w.integer("maxTries", o.MaxTries)
	w.integer("maxTime", o.MaxTime)
	w.integer("maxJobs", o.MaxJobs)
	w.integer("memory", o.Memory)
	w.integer("nice", o.Nice)
	w.str("name", o.Name)
	w.str("workersName", o.WorkersName)
	w.number("sleep", o.Sleep)
	w.integer("timeout", o.Timeout)
	w.integer("balanceCooldown", o.BalanceCooldown)
	w.integer("balanceMaxShift", o.BalanceMaxShift)
	w.integer("parentId", o.ParentID)
	w.number("rest", o.Rest)
	w.str("autoScalingStrategy", o.AutoScalingStrategy)
	w.str("laraworker", o.Laraworker)
	if w.err != nil {
		return "", w.err
	}
	return string(append(w.b, '}')), nil
}

// objectWriter writes a JSON object as json_encode writes a PHP array
// with string keys, member by member.
type objectWriter struct {
	b   []byte
	err error
}

func (w *objectWriter) member(key string) {
	if len(w.b) > 1 {
		w.b = append(w.b, ',')
	}
	w.string(key)
	w.b = append(w.b, ':')
}

func (w *objectWriter) string(s string) {
	if w.err != nil {
		return
	}
	w.b, w.err = phpjson.AppendString(w.b, s, 0)
}

func (w *objectWriter) str(key, v string) {
	w.member(key)
	w.string(v)
}

func (w *objectWriter) integer(key string, v int) {
	w.member(key)
	w.b = strconv.AppendInt(w.b, int64(v), 10)
}

func (w *objectWriter) boolean(key string, v bool) {
	w.member(key)
	w.b = strconv.AppendBool(w.b, v)
}

// number is an int when whole (PHP keeps 3 an int), else a float as
// json_encode writes it.
func (w *objectWriter) number(key string, v float64) {
	w.member(key)
	if v == float64(int64(v)) {
		w.b = strconv.AppendInt(w.b, int64(v), 10)
		return
	}
	if w.err == nil {
		w.b, w.err = phpjson.AppendFloat(w.b, v)
	}
}

// numberOrString is an integer when the text is one ("0", "3"), else the
// string ("1,5,10"), as the config gives backoff.
func (w *objectWriter) numberOrString(key, v string) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && strconv.FormatInt(n, 10) == v {
		w.member(key)
		w.b = strconv.AppendInt(w.b, n, 10)
		return
	}
	w.str(key, v)
}

// Basename is MasterSupervisor::basename() when the app sets no name
// resolver: Str::slug(gethostname()): "_" made "-", "@" made "-at-",
// lower-cased, every character but letters, digits, "-" and whitespace
// removed, runs of "-" and whitespace made one "-", trimmed of "-".
// Str::slug transliterates other characters to ASCII first (voku's
// tables), which Go does not do: a hostname beyond ASCII is an error.
func Basename(hostname string) (string, error) {
	for i := 0; i < len(hostname); i++ {
		if hostname[i] >= 0x80 {
			return "", fmt.Errorf("redishorizon: the hostname %q is not ASCII: Horizon's Str::slug of it is not known here (laraworker reads it through the app's php)", hostname)
		}
	}
	s := strings.ReplaceAll(hostname, "_", "-")
	s = strings.ReplaceAll(s, "@", "-at-")
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(c)
		case c == '-', c == ' ', c == '\t', c == '\n', c == '\r', c == '\f', c == '\v':
			dash = true
		}
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("redishorizon: the hostname %q slugs to nothing: Horizon's master names start with its slug", hostname)
	}
	return b.String(), nil
}
