package payloadcmd

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
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

The app's Laravel version picks what dispatch() writes: --laravel-version,
else the version read from the app as work reads it (--app, or the folder of
--env: Application::VERSION through its PHP, else vendor/ or composer.lock),
else 8.x's payload, which every version reads. 8.x (and 9.0 - 9.3) serialize
every property, the trait properties and declared defaults included; from
9.4 a property that still holds its declared default is left out of the
command (SerializesModels), so only the properties you give (and --queue,
--delay) are there. Payload keys: 12.11+ adds createdAt and delay; 12.51+
data.batchId; 13 deleteWhenMissingModels.

--encrypt encrypts the command with the APP_KEY as ShouldBeEncrypted does.

--class-file FILE (or LARAWORKER_CLASS_FILE) is a JSON declaration, once per
class, of what dispatch() learns from the class itself: its queue options
(tries, backoff, timeout, maxExceptions, failOnTimeout, retryUntil,
deleteWhenMissingModels, which go into the payload as PHP reads them from
the object; 9.4+ leaves them out of the command, 8.x serializes them),
"encrypted" for ShouldBeEncrypted, and its properties' visibility (protected
and private ones are written under PHP's mangled names), types (an int given
to a float property becomes a float) and declared defaults ("default": 9.4+
leaves a property holding it out of the command; not for constructor-promoted
properties, which have none). A property the file does not list, or a value
of the wrong type, is refused. Format:

  {"App\\Jobs\\RetryJob": {"tries": 4, "backoff": [2, 5, 10], "encrypted": false,
     "properties": {"failUntil": {"type": "int"},
                    "quality": {"type": "string", "default": "hd"},
                    "note": {"visibility": "protected", "type": "?string"}}}}

Prints the new job's id and uuid (--json: as a JSON object).`

// PushCommand is `push`: a job pushed as dispatch() would write it.
func PushCommand() *cli.Command {
	return &cli.Command{
		Name:        "push",
		Usage:       "push a job for a PHP (or Go) worker, as dispatch() would",
		ArgsUsage:   "CLASS",
		Description: pushHelp,
		Flags: append(cmdline.ConnectionFlags(),
			&cli.GenericFlag{Name: "prop", Value: &propList{}, Usage: "`NAME=VALUE` public property (repeatable; VALUE is JSON when it parses as JSON)"},
			&cli.StringFlag{Name: "props", Usage: "`FILE` (- for stdin) holding a JSON object of properties"},
			&cli.StringFlag{Name: "queue", Usage: "queue to push onto (default: the connection's default queue)"},
			cmdline.DurationFlag("delay", 0, "how long before the job becomes available, in whole seconds"),
			cmdline.CountFlag("tries", 0, "public $tries (payload maxTries)"),
			&cli.StringFlag{Name: "backoff", Usage: "public $backoff in seconds, `N` or N,N,... (payload backoff)"},
			cmdline.DurationFlag("timeout", 0, "public $timeout, in whole seconds (payload timeout)"),
			&cli.StringFlag{Name: "retry-until", Usage: "public $retryUntil: a Unix `TIME`, an RFC 3339 time, or a Go duration from now such as 10m"},
			&cli.BoolFlag{Name: "encrypt", Usage: "encrypt the command with the APP_KEY (ShouldBeEncrypted)"},
			&cli.StringFlag{Name: "class-file", EnvVars: []string{"LARAWORKER_CLASS_FILE"}, Usage: "`FILE` (JSON) declaring, per class, its queue options, ShouldBeEncrypted and its properties' visibility and types"},
			cmdline.LaravelVersionFlag("it picks the payload keys and which properties the command holds (default: the app's version, read as work reads it; without an app, 8.x's payload, which every version reads)"),
			cmdline.JSONFlag(),
			// Removed flags, kept for one release with a hint (pushDeprecated).
			&cli.StringFlag{Name: "shape", Hidden: true},
			&cli.StringFlag{Name: "output", Hidden: true},
			// Tests compare pushes with PHP fixtures byte for byte.
			&cli.StringFlag{Name: "uuid", Hidden: true},
			&cli.Int64Flag{Name: "created-at", Hidden: true},
		),
		Action: cmdline.Action(runPush),
	}
}

// propList collects repeated --prop flags without splitting on commas (a
// StringSliceFlag would cut JSON arrays apart).
type propList []string

func (p *propList) Set(v string) error { *p = append(*p, v); return nil }
func (p *propList) String() string     { return "" }

func runPush(c *cli.Context, args []string) error {
	if len(args) != 1 {
		msg := "push: takes one CLASS, e.g. 'App\\Jobs\\ProcessPodcast'"
		if len(args) > 1 && c.Bool("json") {
			// Before --props, --json FILE held the properties.
			msg += " (--json is a switch for JSON output now; the properties file is --props FILE)"
		}
		return cli.Exit(msg, 2)
	}
	req, err := pushRequestFrom(c, args[0])
	if err != nil {
		return cli.Exit("push: "+output.OneLine(err.Error()), 2)
	}
	s, err := queueconn.OpenSession(c)
	if err != nil {
		return err
	}
	defer s.Close()
	shape, err := req.shape(s.Info)
	if err != nil {
		return s.Fail(err)
	}
	command, build := req.build(shape)
	if c.Bool("encrypt") || req.encrypt {
		if build.Encrypter, err = queueconn.Encrypter(s.Cfg); err != nil {
			return s.Fail(err)
		}
		if build.Encrypter == nil {
			return cli.Exit("push: --encrypt needs an APP_KEY (in the .env, APP_KEY or LARAWORKER_APP_KEY, or --key-file)", 1)
		}
	}
	queue := req.queue
	if queue == "" {
		queue = s.Cfg.DefaultQueue
	}
	if build.UUID == "" {
		if build.UUID, err = payload.NewUUID(); err != nil {
			return s.Fail(err)
		}
	}
	tp, ts, endSpan, err := pushTrace(c.Context, traceDestination(s.Info.QueueDriver, queue), build.UUID, command.Class)
	if err != nil {
		return cli.Exit("push: "+err.Error(), 1)
	}
	defer endSpan()
	build.Carried = payload.Carried{Traceparent: tp, Tracestate: ts}
	raw, err := payload.BuildObjectPayload(command, build)
	if err != nil {
		return s.Fail(err)
	}
	id, err := s.Q.Push(c.Context, jobqueue.PushItem{Queue: queue, Payload: raw, Delay: req.delay})
	if err != nil {
		return s.Fail(err)
	}
	p, err := payload.Parse(raw)
	if err != nil {
		return s.Fail(err)
	}
	if req.jsonOut {
		return output.WriteJSON(c.App.Writer, map[string]any{"id": id, "uuid": p.UUID, "queue": queue, "class": command.Class})
	}
	output.Say(c, "Pushed job [%v] uuid [%s] onto the [%s] queue.", id, p.UUID, output.Printable(queue))
	return nil
}

// traceDestination names the queue as OpenTelemetry's PHP
// instrumentation does: RedisQueue::getQueue's "queues:<name>" on Redis,
// the queue's name elsewhere (where PHP says "(anonymous)").
func traceDestination(driver, queue string) string {
	if driver == "redis" {
		return "queues:" + queue
	}
	return queue
}

// pushRequest is everything push needs besides the database and the
// app's Laravel version: what the command line and the class file say.
type pushRequest struct {
	class string
	// props are the class's own properties, by plain name, names and
	// types checked against the class file.
	props []phpserialize.Entry
	// decl is the class file's entry for the class; nil without one.
	decl *classDecl
	// version is --laravel-version (or what --shape stands for); "" reads
	// the app's.
	version string
	// base holds the dispatch time, uuid and declared queue options.
	base      payload.BuildOptions
	queue     string
	delaySecs *int64
	delay     time.Duration
	// encrypt: the class file declares ShouldBeEncrypted.
	encrypt bool
	// jsonOut is --json (or the deprecated --output json).
	jsonOut bool
}

func pushRequestFrom(c *cli.Context, classArg string) (pushRequest, error) {
	var req pushRequest
	class, err := phpClassName(classArg)
	if err != nil {
		return req, err
	}
	req.class = class
	if req.version, err = pushVersionFlag(c); err != nil {
		return req, err
	}
	if req.jsonOut, err = pushJSONFlag(c); err != nil {
		return req, err
	}
	now := time.Now()
	if c.IsSet("created-at") {
		now = time.Unix(c.Int64("created-at"), 0)
	}
	req.base.Now, req.base.UUID = now, c.String("uuid")
	if req.props, err = commandProps(c, now); err != nil {
		return req, err
	}
	if err := req.readClassFile(c.String("class-file")); err != nil {
		return req, err
	}
	req.queue = c.String("queue")
	if c.IsSet("delay") {
		secs, err := wholeSeconds(c, "delay")
		if err != nil {
			return req, err
		}
		req.delaySecs = &secs
		req.delay = time.Duration(secs) * time.Second
	}
	return req, nil
}

// shape is the payload shape of the app's Laravel version: the flag's,
// else the version the app's configuration reported (as work reads it),
// else 8.x's, which every version reads.
func (req *pushRequest) shape(info appconfig.AppInfo) (payload.Shape, error) {
	if req.version != "" {
		return shapeFor(req.version, "--laravel-version")
	}
	if info.Version == "" {
		return payload.Shape8, nil
	}
	what := "the app's Laravel version (from " + info.VersionFrom + ")"
	release := leadingVersionRE.FindString(info.Version) // 10.50.3 of 10.50.3-dev
	if release == "" {
		return 0, fmt.Errorf("%s %q names no release: pass --laravel-version", what, info.Version)
	}
	return shapeFor(release, what)
}

// leadingVersionRE is the major.minor a version string starts with.
var leadingVersionRE = regexp.MustCompile(`^v?[0-9]+\.[0-9]+(\.[0-9]+)?`)

// build is the command object and the payload options dispatch() writes
// for the shape: from 9.4 a property that still holds the class's declared
// default is left out of the command, as SerializesModels does; 8.x
// serializes every property, the declared queue options included.
func (req *pushRequest) build(shape payload.Shape) (*phpserialize.Value, payload.BuildOptions) {
	props := req.props
	if req.decl != nil {
		if shape.SerializesDefaults() {
			props = withDeclared(props, req.base.Declared)
		} else {
			props = req.decl.withoutDefaults(props)
		}
		props = req.decl.mangle(req.class, props)
	}
	d := payload.Dispatch{Queue: req.queue, Shape: shape, Delay: req.delaySecs}
	o := req.base
	o.Shape, o.Delay = shape, req.delaySecs
	return payload.NewCommand(req.class, props, d), o
}

// readClassFile checks the properties' names, and reads what the class
// file declares for the class: visibility, types and defaults of its
// properties, its queue options, ShouldBeEncrypted.
func (req *pushRequest) readClassFile(path string) error {
	for _, p := range req.props {
		if err := checkPropName(p.Key.Str); err != nil {
			return err
		}
	}
	if path == "" {
		return nil
	}
	decl, err := loadClassDecl(path, req.class)
	if err != nil {
		return fmt.Errorf("--class-file %s: %w", path, err)
	}
	if decl == nil {
		return fmt.Errorf("--class-file %s has no entry for %s (%s)", path, req.class, classFileFormat)
	}
	if err := decl.checkProps(req.class, req.props); err != nil {
		return err
	}
	req.props = decl.coerce(req.props)
	if req.base.Declared, err = decl.declared(); err != nil {
		return err
	}
	req.decl, req.encrypt = decl, decl.Encrypted
	return nil
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

// shapeVersions are the Laravel versions the removed --shape values stood
// for (--shape 8 serialized every property, as 8.x does).
var shapeVersions = map[string]string{"8": "8.83", "12": "12.11", "12.51": "12.51", "13": "13.0"}

// pushVersionFlag is --laravel-version, or the version the deprecated
// --shape stands for (with a hint on stderr); "" when neither is given.
func pushVersionFlag(c *cli.Context) (string, error) {
	version := c.String("laravel-version")
	if version != "" {
		if _, err := shapeFor(version, "--laravel-version"); err != nil {
			return "", err
		}
	}
	if !c.IsSet("shape") {
		return version, nil
	}
	shape := c.String("shape")
	if c.IsSet("laravel-version") {
		return "", errors.New("--shape is the old name of --laravel-version: give only --laravel-version")
	}
	v, ok := shapeVersions[shape]
	if !ok {
		return "", fmt.Errorf("--shape %q: want 8, 12, 12.51 or 13 (better: --laravel-version with the app's version)", shape)
	}
	output.Warn(c, "push: --shape is deprecated and goes away in the next release: use --laravel-version (--shape %s is --laravel-version %s; give the app's own version, which push reads from the app when it can)", shape, v)
	return v, nil
}

// pushJSONFlag is --json, or the deprecated --output json (with a hint).
func pushJSONFlag(c *cli.Context) (bool, error) {
	if !c.IsSet("output") {
		return c.Bool("json"), nil
	}
	switch out := c.String("output"); out {
	case "json", "text":
		output.Warn(c, "push: --output is deprecated and goes away in the next release: use --json (or nothing for text)")
		return out == "json" || c.Bool("json"), nil
	default:
		return false, fmt.Errorf("--output %q: want text or json (better: --json)", out)
	}
}

// shapeFor is the payload shape of a Laravel version; what names the
// version's source in errors.
func shapeFor(version, what string) (payload.Shape, error) {
	if !appconfig.ValidVersion(version) {
		return 0, fmt.Errorf("%s %q: want a version such as 8.83 or 12.67", what, version)
	}
	shape, err := bridgeproto.ShapeFor(version)
	if err != nil {
		return 0, fmt.Errorf("%s %q: push writes the payloads of Laravel 8 to 13", what, version)
	}
	return shape, nil
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
		out = append(out, phpserialize.Public("tries", phpserialize.Int(cmdline.CountOf(c, "tries"))))
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
	d := cmdline.DurationOf(c, name)
	if d%time.Second != 0 {
		return 0, fmt.Errorf("--%s %s: Laravel counts it in whole seconds", name, d)
	}
	return int64(d / time.Second), nil
}
