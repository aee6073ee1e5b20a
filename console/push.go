package console

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/payload"
	"github.com/laraworker/laraworker/phpserialize"
	"github.com/urfave/cli/v2"
)

const pushHelp = `Builds the payload PHP's dispatch() writes for an object of class CLASS and
inserts it into the jobs table.

Properties, in order: those of --props (a file holding a JSON object), then each --prop
name=value. A value that parses as JSON is taken as json_decode($v, true)
gives it (42 is an int, 0.5 a float, true/false/null, arrays and objects
become PHP arrays); anything else is a string. Quote to force a string:
--prop 'code="007"'. The InteractsWithQueue and Queueable properties follow,
as PHP serializes them (--queue and --delay set queue and delay like
onQueue() and delay() do). --tries, --backoff, --timeout and --retry-until
set the public properties tries, backoff, timeout and retryUntil, from which
the payload's maxTries, backoff, timeout and retryUntil are computed; they
replace a property of the same name in place, else come after the others
(use --prop tries=3 to place one yourself).

--laravel-version is the app's Laravel version (as for work), which picks the payload's key set: before 12.11 every key 8.x writes (and
every trait property serialized, as 8.x does); 12.11+ adds createdAt and
delay; 12.51+ data.batchId; 13 deleteWhenMissingModels. 9.4+ leaves
default-valued trait properties out of the command, so 12.11 and later do
too.

--encrypt encrypts the command with the APP_KEY as ShouldBeEncrypted does.

--class-file FILE (or LARAWORKER_CLASS_FILE) declares, once per class, what
dispatch() learns from the class itself: its queue options (tries, backoff,
timeout, maxExceptions, failOnTimeout, retryUntil, deleteWhenMissingModels,
which go into the payload as PHP reads them from the object; 9.4+ leaves
them out of the command, 8.x serializes them), "encrypted" for
ShouldBeEncrypted, and its properties' visibility (protected and private
ones are written under PHP's mangled names) and types. A property the file
does not list, or a value of the wrong type, is refused. Format:

  {"App\\Jobs\\RetryJob": {"tries": 4, "backoff": [2, 5, 10], "encrypted": false,
     "properties": {"failUntil": {"type": "int"},
                    "note": {"visibility": "protected", "type": "?string"}}}}

Prints the new job's id and uuid (--json: as a JSON object).`

func pushCommand() *cli.Command {
	return &cli.Command{
		Name:        "push",
		Usage:       "push a job for a PHP (or Go) worker, as dispatch() would",
		ArgsUsage:   "CLASS",
		Description: pushHelp,
		Flags: append(connectionFlags(),
			&cli.GenericFlag{Name: "prop", Value: &propList{}, Usage: "`NAME=VALUE` public property (repeatable; VALUE is JSON when it parses as JSON)"},
			&cli.StringFlag{Name: "props", Usage: "`FILE` (- for stdin) holding a JSON object of properties"},
			&cli.StringFlag{Name: "queue", Usage: "queue to push onto (default: the connection's default queue)"},
			durationFlag("delay", 0, "how long before the job becomes available, in whole seconds"),
			&cli.Int64Flag{Name: "tries", Usage: "public $tries (payload maxTries)"},
			&cli.StringFlag{Name: "backoff", Usage: "public $backoff in seconds, `N` or N,N,... (payload backoff)"},
			durationFlag("timeout", 0, "public $timeout, in whole seconds (payload timeout)"),
			&cli.StringFlag{Name: "retry-until", Usage: "public $retryUntil: a Unix `TIME`, an RFC 3339 time, or a Go duration from now such as 10m"},
			&cli.BoolFlag{Name: "encrypt", Usage: "encrypt the command with the APP_KEY (ShouldBeEncrypted)"},
			&cli.StringFlag{Name: "class-file", EnvVars: []string{"LARAWORKER_CLASS_FILE"}, Usage: "`FILE` (JSON) declaring, per class, its queue options, ShouldBeEncrypted and its properties' visibility and types"},
			laravelVersionFlag(),
			jsonFlag(),
			// Tests compare pushes with PHP fixtures byte for byte.
			&cli.StringFlag{Name: "uuid", Hidden: true},
			&cli.Int64Flag{Name: "created-at", Hidden: true},
		),
		Action: action(runPush),
	}
}

// propList collects repeated --prop flags without splitting on commas (a
// StringSliceFlag would cut JSON arrays apart).
type propList []string

func (p *propList) Set(v string) error { *p = append(*p, v); return nil }
func (p *propList) String() string     { return "" }

func runPush(c *cli.Context, args []string) error {
	if len(args) != 1 {
		return cli.Exit("push: takes one CLASS, e.g. 'App\\Jobs\\ProcessPodcast'", 2)
	}
	req, err := pushRequestFrom(c, args[0])
	if err != nil {
		return cli.Exit("push: "+oneLine(err.Error()), 2)
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	defer s.Close()
	if c.Bool("encrypt") || req.encrypt {
		if req.build.Encrypter, err = encrypterFor(s.cfg); err != nil {
			return s.fail(err)
		}
		if req.build.Encrypter == nil {
			return cli.Exit("push: --encrypt needs an APP_KEY (in the .env, APP_KEY or LARAWORKER_APP_KEY, or --key)", 1)
		}
	}
	raw, err := payload.BuildObjectPayload(req.command, req.build)
	if err != nil {
		return s.fail(err)
	}
	queue := req.queue
	if queue == "" {
		queue = s.cfg.DefaultQueue
	}
	id, err := pushWithID(c.Context, s.q.Admin, jobqueue.PushItem{Queue: queue, Payload: raw, Delay: req.delay})
	if err != nil {
		return s.fail(err)
	}
	p, err := payload.Parse(raw)
	if err != nil {
		return s.fail(err)
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"id": id, "uuid": p.UUID, "queue": queue, "class": req.command.Class})
	}
	say(c, "Pushed job [%v] uuid [%s] onto the [%s] queue.", id, p.UUID, printable(queue))
	return nil
}

// idPusher is a store whose job ids are not numbers (Redis's are the
// payload's "id"): it names the job it pushed by its own id.
type idPusher interface {
	PushID(ctx context.Context, item jobqueue.PushItem) (string, error)
}

// pushWithID pushes item and returns the new job's id: a number for the
// database queue, a string for the Redis one.
func pushWithID(ctx context.Context, admin jobqueue.Admin, item jobqueue.PushItem) (any, error) {
	if p, ok := admin.(idPusher); ok {
		return p.PushID(ctx, item)
	}
	return admin.Push(ctx, item)
}

// pushRequest is everything push needs besides the database.
type pushRequest struct {
	command *phpserialize.Value
	build   payload.BuildOptions
	queue   string
	delay   time.Duration
	// encrypt: the class file declares ShouldBeEncrypted.
	encrypt bool
}

func pushRequestFrom(c *cli.Context, classArg string) (pushRequest, error) {
	var req pushRequest
	class, err := phpClassName(classArg)
	if err != nil {
		return req, err
	}
	if req.build.Shape, err = shapeFor(c.String("laravel-version")); err != nil {
		return req, err
	}
	now := time.Now()
	if c.IsSet("created-at") {
		now = time.Unix(c.Int64("created-at"), 0)
	}
	req.build.Now, req.build.UUID = now, c.String("uuid")
	props, err := commandProps(c, now)
	if err != nil {
		return req, err
	}
	if props, err = req.applyClassFile(c.String("class-file"), class, props); err != nil {
		return req, err
	}
	d := payload.Dispatch{Queue: c.String("queue"), Shape: req.build.Shape}
	if c.IsSet("delay") {
		secs, err := wholeSeconds(c, "delay")
		if err != nil {
			return req, err
		}
		d.Delay, req.build.Delay = &secs, &secs
		req.delay = time.Duration(secs) * time.Second
	}
	req.queue = d.Queue
	req.command = payload.NewCommand(class, props, d)
	return req, nil
}

// applyClassFile checks the properties' names, and applies what the class
// file declares for class: visibility and types of its properties, its
// queue options, ShouldBeEncrypted.
func (req *pushRequest) applyClassFile(path, class string, props []phpserialize.Entry) ([]phpserialize.Entry, error) {
	for _, p := range props {
		if err := checkPropName(p.Key.Str); err != nil {
			return nil, err
		}
	}
	if path == "" {
		return props, nil
	}
	decl, err := loadClassDecl(path, class)
	if err != nil {
		return nil, fmt.Errorf("--class-file %s: %w", path, err)
	}
	if decl == nil {
		return nil, fmt.Errorf("--class-file %s has no entry for %s", path, class)
	}
	if props, err = decl.applyProps(class, props); err != nil {
		return nil, err
	}
	if req.build.Declared, err = decl.declared(); err != nil {
		return nil, err
	}
	if req.build.Shape == payload.Shape8 {
		// 8.x (and 9.0-9.3) serialize every property, defaults included.
		props = withDeclared(props, req.build.Declared)
	}
	req.encrypt = decl.Encrypted
	return props, nil
}

// withDeclared appends the declared queue options the properties do not
// set, in a fixed order.
func withDeclared(props []phpserialize.Entry, declared map[string]*phpserialize.Value) []phpserialize.Entry {
	set := map[string]bool{}
	for _, p := range props {
		set[p.Key.Str] = true
	}
	for _, name := range []string{"tries", "maxExceptions", "backoff", "timeout", "retryUntil", "failOnTimeout", "deleteWhenMissingModels"} {
		if v, ok := declared[name]; ok && !set[name] {
			props = append(props, phpserialize.Public(name, v))
		}
	}
	return props
}

// classNameRE is a PHP class name: namespace segments of identifiers
// (PHP allows bytes >= 0x80 in identifiers).
var classNameRE = regexp.MustCompile(`^[A-Za-z_\x{80}-\x{10FFFF}][A-Za-z0-9_\x{80}-\x{10FFFF}]*(\\[A-Za-z_\x{80}-\x{10FFFF}][A-Za-z0-9_\x{80}-\x{10FFFF}]*)*$`)

// phpClassName accepts 'App\Jobs\X' and '\App\Jobs\X' and returns the
// form ::class gives (no leading backslash).
func phpClassName(s string) (string, error) {
	s = strings.TrimPrefix(s, `\`)
	if !classNameRE.MatchString(s) {
		return "", fmt.Errorf("%q is not a PHP class name", s)
	}
	return s, nil
}

// shapeFor picks the payload key set the app's Laravel version writes.
func shapeFor(version string) (payload.Shape, error) {
	if version == "" {
		return payload.Shape8, nil
	}
	if !appconfig.ValidVersion(version) {
		return 0, fmt.Errorf("--laravel-version %q: want a version such as 8.83 or 12.67", version)
	}
	switch {
	case appconfig.VersionCompare(version, "12.11") < 0:
		return payload.Shape8, nil
	case appconfig.VersionCompare(version, "12.51") < 0:
		return payload.Shape12, nil
	case appconfig.VersionCompare(version, "13") < 0:
		return payload.Shape1251, nil
	}
	return payload.Shape13, nil
}

// commandProps gathers the class's own properties: --props, then --prop,
// then the option flags, each replacing a property of the same name in
// place.
func commandProps(c *cli.Context, now time.Time) ([]phpserialize.Entry, error) {
	var props []phpserialize.Entry
	if name := c.String("props"); name != "" {
		raw, err := readInput(name, c.App.Reader)
		if err != nil {
			return nil, fmt.Errorf("--props: %w", err)
		}
		if props, err = propsFromJSON(raw); err != nil {
			return nil, fmt.Errorf("--props %s: %w", name, err)
		}
	}
	for _, kv := range *c.Generic("prop").(*propList) {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--prop wants NAME=VALUE, got %q", kv)
		}
		props = setProp(props, name, propValue(value))
	}
	opts, err := optionProps(c, now)
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		props = setProp(props, o.Key.Str, o.Value)
	}
	return props, nil
}

func propsFromJSON(raw []byte) ([]phpserialize.Entry, error) {
	v, err := payload.FromJSON(raw)
	if err != nil {
		return nil, err
	}
	if v.Kind != phpserialize.KindArray || (len(v.Entries) > 0 && v.IsList()) {
		return nil, errors.New("want a JSON object of properties")
	}
	props := make([]phpserialize.Entry, 0, len(v.Entries))
	for _, e := range v.Entries {
		if e.Key.String() == "" {
			return nil, errors.New("a property name is empty")
		}
		props = append(props, phpserialize.Public(e.Key.String(), e.Value))
	}
	return props, nil
}

// propValue reads a --prop value: JSON when it parses, else the text.
func propValue(s string) *phpserialize.Value {
	if v, err := payload.FromJSON([]byte(s)); err == nil {
		return v
	}
	return phpserialize.String(s)
}

func setProp(props []phpserialize.Entry, name string, v *phpserialize.Value) []phpserialize.Entry {
	for i := range props {
		if props[i].Key.Str == name {
			props[i].Value = v
			return props
		}
	}
	return append(props, phpserialize.Public(name, v))
}

// optionProps turns --tries, --backoff, --timeout and --retry-until into
// the public properties Laravel reads them from.
func optionProps(c *cli.Context, now time.Time) ([]phpserialize.Entry, error) {
	var out []phpserialize.Entry
	if c.IsSet("tries") {
		out = append(out, phpserialize.Public("tries", phpserialize.Int(c.Int64("tries"))))
	}
	if c.IsSet("backoff") {
		v, err := parseBackoff(c.String("backoff"))
		if err != nil {
			return nil, err
		}
		out = append(out, phpserialize.Public("backoff", v))
	}
	if c.IsSet("timeout") {
		secs, err := wholeSeconds(c, "timeout")
		if err != nil {
			return nil, err
		}
		out = append(out, phpserialize.Public("timeout", phpserialize.Int(secs)))
	}
	if c.IsSet("retry-until") {
		t, err := parseRetryUntil(c.String("retry-until"), now)
		if err != nil {
			return nil, err
		}
		out = append(out, phpserialize.Public("retryUntil", phpserialize.Int(t)))
	}
	return out, nil
}

// parseBackoff: "3" is public $backoff = 3, "1,5,10" is [1, 5, 10].
func parseBackoff(s string) (*phpserialize.Value, error) {
	parts := strings.Split(s, ",")
	items := make([]*phpserialize.Value, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("--backoff wants seconds, N or N,N,..., got %q", s)
		}
		items[i] = phpserialize.Int(n)
	}
	if len(items) == 1 {
		return items[0], nil
	}
	return phpserialize.List(items...), nil
}

func parseRetryUntil(s string, now time.Time) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.Unix(), nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(d).Unix(), nil
	}
	return 0, fmt.Errorf("--retry-until wants a Unix time, an RFC 3339 time or a duration, got %q", s)
}

// wholeSeconds reads a duration flag whose PHP counterpart is an int of
// seconds: 90 and 1m30s are fine, 1.5 or 1500ms are not.
func wholeSeconds(c *cli.Context, name string) (int64, error) {
	d := durationOf(c, name)
	if d%time.Second != 0 {
		return 0, fmt.Errorf("--%s %s: Laravel counts it in whole seconds", name, d)
	}
	return int64(d / time.Second), nil
}
