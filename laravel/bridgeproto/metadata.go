package bridgeproto

import (
	"encoding/json"
	"fmt"

	"github.com/laraworker/laraworker/internal/phparray"
	"github.com/laraworker/laraworker/laravel/payload"
)

// MetadataKey is the payload key the bridge adds to the payload of every
// job of a class it routes (bridge/PROTOCOL.md).
const MetadataKey = "laraworker"

// MetadataVersion is the "v" this package reads.
const MetadataVersion = 1

// Metadata is the "laraworker" payload key: what the PHP class declares
// and 8-12 payloads do not carry, recorded by the bridge when the job was
// queued. Fields a part could not be computed for are zero and named in
// Errors.
type Metadata struct {
	V       int    `json:"v"`
	Laravel string `json:"laravel"` // Application::VERSION that recorded it
	At      int64  `json:"at"`      // when (Unix seconds): middleware() and limiters were evaluated then
	Class   string `json:"class"`   // get_class() of the job
	// Middleware is middleware() then the $middleware property, in the
	// order Laravel runs them; entries of Type "other" are not carried.
	Middleware []Middleware `json:"middleware"`
	// NotCarried names (by class, "Closure", or "<class>::middleware()"
	// when that method threw) every middleware only PHP can run.
	NotCarried              []string         `json:"not_carried"`
	Unique                  *Unique          `json:"unique"`
	DeleteWhenMissingModels bool             `json:"delete_when_missing_models"`
	Models                  []Model          `json:"models"`
	Failed                  bool             `json:"failed"` // the class defines failed()
	Stores                  map[string]Store `json:"stores"`
	Errors                  []string         `json:"errors"`
}

// Middleware is one job middleware. Which fields are set depends on Type:
// WithoutOverlapping, RateLimited, RateLimitedWithRedis,
// ThrottlesExceptions, ThrottlesExceptionsWithRedis, Skip,
// SkipIfBatchCancelled, Release, or "other" (Reason says why it is not
// carried).
type Middleware struct {
	Type   string `json:"type"`
	Class  string `json:"class"`
	Source string `json:"source"` // "method" (middleware()) or "property" ($middleware)
	Reason string `json:"reason,omitempty"`

	// Key is the name the cache Repository (or the Redis limiter) gets;
	// CacheKey is Key behind the store's prefix: the cache table's key, or
	// the Redis key before the Redis client's prefix. Store names an entry
	// of Metadata.Stores.
	Key      string `json:"key,omitempty"`
	CacheKey string `json:"cache_key,omitempty"`
	Store    string `json:"store,omitempty"`

	// WithoutOverlapping (Release: ReleaseAfter).
	ReleaseAfter *int64 `json:"release_after,omitempty"`
	ReleaseAt    *int64 `json:"release_at,omitempty"`
	DontRelease  bool   `json:"dont_release,omitempty"`
	ExpiresAfter int64  `json:"expires_after,omitempty"`
	Shared       bool   `json:"shared,omitempty"`

	// RateLimited(WithRedis).
	Limiter    string  `json:"limiter,omitempty"`
	Registered bool    `json:"registered,omitempty"`
	Unlimited  bool    `json:"unlimited,omitempty"`
	Limits     []Limit `json:"limits,omitempty"`
	// Release: RateLimited releases the job when limited (false:
	// dontRelease(), the job counts as done); Release middleware: whether
	// it releases.
	Release bool `json:"release,omitempty"`

	// The ...WithRedis variants: the Redis connection of the limiter.
	RedisConnection string `json:"redis_connection,omitempty"`

	// ThrottlesExceptions(WithRedis).
	MaxAttempts    int64   `json:"max_attempts,omitempty"`
	DecaySeconds   int64   `json:"decay_seconds,omitempty"`
	BackoffSeconds int64   `json:"backoff_seconds,omitempty"`
	By             *string `json:"by,omitempty"`
	ByJob          bool    `json:"by_job,omitempty"`

	// Skip: the condition as evaluated at dispatch.
	Skip bool `json:"skip,omitempty"`
}

// Limit is one Limit of a rate limiter, keyed md5(limiterName . key).
type Limit struct {
	Key          string `json:"key"`
	CacheKey     string `json:"cache_key,omitempty"` // RateLimited only
	MaxAttempts  int64  `json:"max_attempts"`
	DecaySeconds int64  `json:"decay_seconds"`
}

// Unique is a ShouldBeUnique job's lock.
type Unique struct {
	UntilProcessing bool    `json:"until_processing"`
	ID              string  `json:"id"`
	Key             string  `json:"key"`
	CacheKey        string  `json:"cache_key"`
	Store           string  `json:"store"`
	UniqueFor       int64   `json:"unique_for"`
	Owner           *string `json:"owner"`
}

// Model is a model (or Eloquent collection) the command holds as a
// ModelIdentifier.
type Model struct {
	Property   string `json:"property"`
	Class      string `json:"class"`
	Collection bool   `json:"collection"`
	// Connection, Table (behind the connection's table prefix) and Key
	// (the key column) are empty for a QueueableEntity that is not an
	// Eloquent model.
	Connection string            `json:"connection"`
	Table      string            `json:"table"`
	Key        string            `json:"key"`
	IDs        []json.RawMessage `json:"ids"`
}

// Store is a cache store, by its config/cache.php name in Metadata.Stores.
type Store struct {
	Driver string `json:"driver"`
	// Prefix is what the store puts before every key (a RedisStore on
	// 8-10 adds ":" to the configured prefix).
	Prefix string `json:"prefix"`
	// Connection is the database connection (database driver) or the
	// Redis connection (redis driver); LockConnection the same for locks.
	Connection     string `json:"connection,omitempty"`
	LockConnection string `json:"lock_connection,omitempty"`
	// Table and LockTable (database driver) are behind the connection's
	// table prefix; LockTimeout is the lock expiry the store uses for a
	// lock taken for 0 seconds.
	Table       string `json:"table,omitempty"`
	LockTable   string `json:"lock_table,omitempty"`
	LockTimeout int64  `json:"lock_timeout,omitempty"`
}

// ReadMetadata reads the "laraworker" key of a payload; nil, nil when the
// payload has none (the class is not routed by the bridge, the bridge is
// older, or the job was queued before it was installed). It reads the
// record in whatever shape its arrays arrive: `queue:retry` and
// `laraworker retry` turn "stores":{} into [], Laravel's Redis pop and
// release scripts (cjson) turn every empty list into {}.
func ReadMetadata(p *payload.Payload) (*Metadata, error) {
	raw, ok := p.Extra[MetadataKey]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var head struct {
		V int `json:"v"`
	}
	if err := phparray.Unmarshal(raw, &head); err != nil {
		return nil, &payload.PayloadError{Key: MetadataKey, Msg: "want the bridge's metadata object: " + err.Error()}
	}
	if head.V != MetadataVersion {
		return nil, &payload.PayloadError{Key: MetadataKey, Msg: fmt.Sprintf("version %d; this laraworker reads version %d (update laraworker or the bridge)", head.V, MetadataVersion)}
	}
	var m Metadata
	if err := phparray.Unmarshal(raw, &m); err != nil {
		return nil, &payload.PayloadError{Key: MetadataKey, Msg: err.Error()}
	}
	return &m, nil
}

// Carried reports whether every middleware is carried as data.
func (m *Metadata) Carried() bool { return len(m.NotCarried) == 0 }
