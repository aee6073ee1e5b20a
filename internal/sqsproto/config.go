package sqsproto

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/phparray"
)

// Config is one Laravel queue connection with driver "sqs"
// (config/queue.php connections.<name>) as SqsConnector reads it and
// hands it to aws-sdk-php's SqsClient. FromLaravel builds it from the
// app's config array.
type Config struct {
	// Connection is the queue connection's name, e.g. "sqs": what
	// failed_jobs.connection records.
	Connection string
	// Queue is the default queue ("queue"): a name, or a full queue URL.
	Queue string
	// Prefix and Suffix make a queue name a queue URL (SqsQueue::getQueue).
	Prefix, Suffix string
	// Region is "region"; empty: the AWS SDK's default chain (AWS_REGION,
	// the shared config file).
	Region string
	// Endpoint is "endpoint": where the client sends its requests instead
	// of AWS's regional endpoint (a local server, a VPC endpoint).
	Endpoint string
	// Credentials are the static credentials the connector gives the
	// client, when it gives any (see FromLaravel); nil: Provider, else the
	// AWS SDK's default chain.
	Credentials *StaticCredentials
	// Provider is a named credential provider: "ecs" (the container's
	// credentials endpoint) or "instance" (EC2's instance metadata), as
	// SqsConnector resolves "credentials" since 13.6; "anonymous" for
	// "credentials" => false (requests are not signed).
	Provider string
	// Profile is "profile": the shared config/credentials files' profile.
	Profile string
	// HTTPTimeout and ConnectTimeout are "http.timeout" and
	// "http.connect_timeout" (SqsConnector's defaults: 60 s each). A long
	// poll waits inside HTTPTimeout.
	HTTPTimeout, ConnectTimeout time.Duration
	// MaxAttempts is "retries" + 1 (aws-sdk-php's retries count the
	// retries, the Go SDK's attempts the tries); 0: the Go SDK's default.
	MaxAttempts int
	// UseFIPS and UseDualStack are "use_fips_endpoint" and
	// "use_dual_stack_endpoint".
	UseFIPS, UseDualStack bool
	// Overflow is "overflow" (Laravel 13.9+): large payloads kept in the
	// app's cache, the message holding a pointer to them.
	Overflow Overflow
	// Vapor: laravel/vapor-core serves the connection (VaporQueue,
	// VaporJob): attempts counted in the payload, release by delete and
	// send.
	Vapor bool
	// Ignored are the connection's keys that the AWS SDK for PHP would
	// read and this client does not apply (say them at start).
	Ignored []string
}

// StaticCredentials are an access key, secret and session token.
type StaticCredentials struct {
	Key    string
	Secret Secret
	Token  Secret
}

// Secret is a credential: every formatting path prints "[redacted]".
type Secret string

const redacted = "[redacted]"

// Reveal is the value; never log it.
func (s Secret) Reveal() string { return string(s) }

func (Secret) String() string                { return redacted }
func (Secret) GoString() string              { return `"` + redacted + `"` }
func (Secret) Format(f fmt.State, _ rune)    { fmt.Fprint(f, redacted) }
func (Secret) MarshalText() ([]byte, error)  { return []byte(redacted), nil }
func (s StaticCredentials) String() string   { return "{Key:" + s.Key + " Secret:" + redacted + "}" }
func (s StaticCredentials) GoString() string { return s.String() }
func (s *StaticCredentials) Format(f fmt.State, _ rune) {
	if s == nil {
		fmt.Fprint(f, "<nil>")
		return
	}
	fmt.Fprint(f, s.String())
}

// Overflow is the "overflow" block (Laravel 13.9+, SqsQueue's
// overflowStorage).
type Overflow struct {
	// Enabled: message bodies of the form {"@pointer":"laravel:sqs-payloads:<uuid>"}
	// are read from the cache store Store (SqsJob::getRawBody reads them
	// only then).
	Enabled bool
	// Store is the cache store's name; "" is the app's default store.
	Store string
	// Always puts every payload in the cache (push side).
	Always bool
	// DeleteAfterProcessing forgets the cache entry after the message is
	// deleted (true unless configured false).
	DeleteAfterProcessing bool
	// FlushOnClear flushes the whole cache store on queue:clear (13.10+).
	FlushOnClear bool
}

// ConfigError is a connection config the client cannot be built from.
type ConfigError struct{ err error }

func (e *ConfigError) Error() string { return e.err.Error() }
func (e *ConfigError) Unwrap() error { return e.err }

func configErr(format string, args ...any) error {
	return &ConfigError{err: fmt.Errorf(format, args...)}
}

// Defaults SqsConnector merges under the config (getDefaultConfiguration).
const (
	DefaultHTTPTimeout    = 60 * time.Second
	DefaultConnectTimeout = 60 * time.Second
)

// driverKeys are the connection's keys that Laravel reads itself (or that
// the SDK ignores): never reported as ignored.
var driverKeys = []string{"driver", "queue", "prefix", "suffix", "region", "endpoint", "key", "secret", "token",
	"credentials", "profile", "http", "retries", "use_fips_endpoint", "use_dual_stack_endpoint", "version",
	"after_commit", "overflow", "retry_after", "block_for", "use_path_style_endpoint", "connection"}

// LaravelOptions are what FromLaravel needs besides the array.
type LaravelOptions struct {
	// Vapor: laravel/vapor-core's service provider is registered (it
	// re-registers the sqs driver with its VaporConnector).
	Vapor bool
}

// FromLaravel reads config('queue.connections.<connection>') of a
// connection with driver "sqs" (decoded from JSON: numbers are float64),
// as SqsConnector::connect does: static credentials from "key" and
// "secret" (and "token") when both are set, a named provider from
// "credentials" (13.6+, which wins over them), else "credentials" as the
// SDK reads it, else the AWS SDK's default chain.
func FromLaravel(connection string, conn map[string]any, opts LaravelOptions) (Config, error) {
	c := Config{Connection: connection, Vapor: opts.Vapor, HTTPTimeout: DefaultHTTPTimeout, ConnectTimeout: DefaultConnectTimeout}
	if d := str(conn["driver"]); d != "sqs" {
		return Config{}, configErr("sqsqueue: queue connection %q has driver %q, not sqs", connection, d)
	}
	c.Queue, c.Prefix, c.Suffix = str(conn["queue"]), str(conn["prefix"]), str(conn["suffix"])
	c.Region, c.Endpoint, c.Profile = str(conn["region"]), str(conn["endpoint"]), str(conn["profile"])
	if err := c.readCredentials(conn); err != nil {
		return Config{}, err
	}
	if err := c.readHTTP(conn["http"]); err != nil {
		return Config{}, err
	}
	if r, ok := conn["retries"]; ok && r != nil {
		n, ok := r.(float64)
		if !ok || n < 0 || n != float64(int(n)) {
			return Config{}, configErr("sqsqueue: queue connection %q: \"retries\" is %v, not a whole number of retries (aws-sdk-php's retries; an array of retry settings is not read)", connection, r)
		}
		c.MaxAttempts = int(n) + 1
	}
	c.UseFIPS, c.UseDualStack = phparray.Truthy(conn["use_fips_endpoint"]), phparray.Truthy(conn["use_dual_stack_endpoint"])
	if err := c.readOverflow(conn["overflow"]); err != nil {
		return Config{}, err
	}
	for k := range conn {
		if !slices.Contains(driverKeys, k) {
			c.Ignored = append(c.Ignored, k)
		}
	}
	slices.Sort(c.Ignored)
	if c.Queue == "" {
		return Config{}, configErr("sqsqueue: queue connection %q has no \"queue\" (SQS_QUEUE): Laravel's worker would pop %q", connection, c.QueueURL(""))
	}
	if c.Endpoint != "" {
		if u, err := url.Parse(c.Endpoint); err != nil || u.Scheme == "" || u.Host == "" {
			return Config{}, configErr("sqsqueue: queue connection %q: \"endpoint\" %q is not a URL with a scheme and a host", connection, c.Endpoint)
		}
	}
	return c, nil
}

// readCredentials is SqsConnector's choice of credentials.
func (c *Config) readCredentials(conn map[string]any) error {
	key, secret, token := str(conn["key"]), str(conn["secret"]), str(conn["token"])
	provider, err := namedProvider(c.Connection, conn["credentials"])
	if err != nil {
		return err
	}
	switch {
	case provider != "":
		c.Provider = provider
	case key != "" && secret != "":
		c.Credentials = &StaticCredentials{Key: key, Secret: Secret(secret), Token: Secret(token)}
	default:
		// "credentials" as the SDK reads it: an array of key and secret.
		if m, ok := conn["credentials"].(map[string]any); ok && str(m["key"]) != "" && str(m["secret"]) != "" {
			c.Credentials = &StaticCredentials{Key: str(m["key"]), Secret: Secret(str(m["secret"])), Token: Secret(str(m["token"]))}
		}
	}
	return nil
}

// namedProvider reads "credentials" when it names a provider: "ecs" or
// "instance" (a string, or an array with "provider"), or false (no
// credentials: anonymous requests, as the SDK does).
func namedProvider(connection string, v any) (string, error) {
	name := ""
	switch v := v.(type) {
	case nil:
		return "", nil
	case bool:
		if !v {
			return "anonymous", nil
		}
		return "", configErr("sqsqueue: queue connection %q: \"credentials\" is true, which names no credentials", connection)
	case string:
		name = v
	case map[string]any:
		p, ok := v["provider"]
		if !ok {
			return "", nil // key and secret, read by the caller
		}
		name = str(p)
	default:
		return "", configErr("sqsqueue: queue connection %q: \"credentials\" is a %T, which laraworker cannot read (an object or callable provider works in PHP only)", connection, v)
	}
	switch name {
	case "ecs", "instance":
		return name, nil
	}
	// SqsConnector's own message (13.6+).
	return "", configErr("sqsqueue: queue connection %q: Invalid credential provider [%s]: laraworker knows \"ecs\" and \"instance\", as Laravel does", connection, name)
}

// readHTTP reads "http" => ['timeout' => s, 'connect_timeout' => s].
func (c *Config) readHTTP(v any) error {
	m, ok := v.(map[string]any)
	if v == nil || !ok {
		return nil
	}
	for key, dst := range map[string]*time.Duration{"timeout": &c.HTTPTimeout, "connect_timeout": &c.ConnectTimeout} {
		raw, ok := m[key]
		if !ok || raw == nil {
			continue
		}
		f, ok := raw.(float64)
		if !ok || f < 0 {
			return configErr("sqsqueue: queue connection %q: \"http.%s\" is %v, not a number of seconds", c.Connection, key, raw)
		}
		// Guzzle's 0 is "no timeout".
		*dst = time.Duration(f * float64(time.Second))
	}
	return nil
}

// readOverflow reads the "overflow" block (13.9+).
func (c *Config) readOverflow(v any) error {
	m, ok := v.(map[string]any)
	if v == nil || !ok {
		return nil
	}
	c.Overflow = Overflow{
		Enabled: phparray.Truthy(m["enabled"]), Store: str(m["store"]), Always: phparray.Truthy(m["always"]),
		DeleteAfterProcessing: true, FlushOnClear: phparray.Truthy(m["flush_on_clear"]),
	}
	if d, ok := m["delete_after_processing"]; ok {
		c.Overflow.DeleteAfterProcessing = phparray.Truthy(d)
	}
	return nil
}

// QueueURL is SqsQueue::getQueue: the queue's URL. An empty name is the
// connection's default queue; a name that is a URL is used as it is;
// otherwise prefix (its trailing slashes trimmed) + "/" + name, with the
// suffix appended unless the name ends with it, before ".fifo" for a FIFO
// queue.
func (c Config) QueueURL(name string) string {
	if name == "" {
		name = c.Queue
	}
	if IsURL(name) {
		return name
	}
	prefix := strings.TrimRight(c.Prefix, "/")
	if base, ok := strings.CutSuffix(name, ".fifo"); ok {
		return prefix + "/" + finish(base, c.Suffix) + ".fifo"
	}
	return prefix + "/" + finish(name, c.Suffix)
}

// finish is Str::finish: s ending with suffix once.
func finish(s, suffix string) string {
	if suffix == "" || strings.HasSuffix(s, suffix) {
		return s
	}
	return s + suffix
}

// IsURL is what PHP's FILTER_VALIDATE_URL accepts here: a scheme and a
// host.
func IsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && u.Host != "" && !strings.ContainsAny(s, " \t\n")
}

// IsFIFO reports whether a queue (name or URL) is a FIFO queue, as
// Laravel tells: its name ends in ".fifo".
func IsFIFO(queue string) bool { return strings.HasSuffix(queue, ".fifo") }

// Validate checks what the client needs beyond FromLaravel's checks.
func (c Config) Validate() error {
	if c.Queue == "" {
		return &ConfigError{err: errors.New("sqsqueue: no default queue")}
	}
	return nil
}

func str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return fmt.Sprint(v)
	case bool:
		if v {
			return "1"
		}
	}
	return ""
}
