package handlers

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// Class is what a registration declares about its PHP job class beyond
// its properties: what PHP reads from the class itself (interfaces,
// methods, default property values) and so cannot find in a payload
// written by every Laravel version. Options given to Handle, HandleFunc
// and Register fill it; Registry.Class returns it.
type Class struct {
	// Unique is set when the class implements ShouldBeUnique.
	Unique *Unique
	// DeleteWhenMissingModels is the class's $deleteWhenMissingModels
	// (or #[DeleteWhenMissingModels]). Laravel 13 writes it into the
	// payload, which then wins; 8-12 read it from the class.
	DeleteWhenMissingModels bool
	// Models are the Eloquent models whose rows the worker looks up before
	// running a job, as SerializesModels does when PHP unserializes it.
	Models []Model
	// Middleware is the class's job middleware (middleware()), in order,
	// outermost first: WithoutOverlapping, RateLimited, ... (jobmiddleware.go).
	Middleware []JobMiddleware
	// Debounce is what a #[DebounceFor] class (Laravel 13.6+) computes in
	// PHP methods, which its jobs do not carry: set by DebounceID and
	// DebounceVia. Nil: the id is the command's public debounceId property
	// ("" without one) and the owner lives in the app's default store.
	Debounce *Debounce
}

// Debounce describes a #[DebounceFor] class's debounceId() and
// debounceVia() methods. The worker skips a superseded dispatch as
// CallQueuedHandler does: it reads the owner of the key
// laravel_debounced_job:<class>:<id> and deletes, without running, a job
// whose debounceOwner is no longer that owner.
type Debounce struct {
	// ID is the class's debounceId(); nil: the command's public
	// debounceId property, or "".
	ID UniqueIDFunc
	// Store is the cache store debounceVia() returns, by its name in
	// config/cache.php; "" means the app's default store.
	Store string
}

// DebounceID declares the class's debounceId() method: id computes it
// from the command (handlers.UniqueIDProperty for `return $this->x;`).
func DebounceID(id UniqueIDFunc) Option {
	return func(c *Class) {
		if c.Debounce == nil {
			c.Debounce = &Debounce{}
		}
		c.Debounce.ID = id
	}
}

// DebounceVia names the cache store the class's debounceVia() returns (as
// config/cache.php names it: "database", "redis"...).
func DebounceVia(store string) Option {
	return func(c *Class) {
		if c.Debounce == nil {
			c.Debounce = &Debounce{}
		}
		c.Debounce.Store = store
	}
}

// PHPString is PHP's string conversion of a scalar property value (what
// `'key:'.$value` makes of it): ints in decimal, true as "1", false and
// null as "". Other values (floats, arrays, objects, enums) are refused.
func PHPString(v *phpserialize.Value) (string, error) { return phpString(v) }

// Unique describes a ShouldBeUnique class.
type Unique struct {
	// ID is the class's uniqueId() (or $uniqueId); nil means it has
	// neither, and the id is "".
	ID UniqueIDFunc
	// UntilProcessing is ShouldBeUniqueUntilProcessing: the lock is
	// released just before the job runs instead of after.
	UntilProcessing bool
	// Store is the cache store uniqueVia() returns, by its name in
	// config/cache.php; "" means the app's default store.
	Store string
}

// UniqueIDFunc computes a job's uniqueId() from its command, as the PHP
// method does. Laravel 11.39+ writes the lock key into the payload, so it
// is only used for jobs whose payload lacks it (Laravel 8 to 11.38).
type UniqueIDFunc func(cmd *payload.Command) (string, error)

// Model names the table of an Eloquent model class, for the lookups that
// tell a missing model.
type Model struct {
	Class string // e.g. `App\Models\Podcast`
	Table string // e.g. "podcasts"
	// Key is the primary key column; "" means "id".
	Key string
}

// Option declares a fact about a registration's PHP class.
type Option func(*Class)

// ShouldBeUnique declares that the class implements ShouldBeUnique, with
// id as its uniqueId() (nil when it has none). The worker then releases
// the job's lock when the job is done or has failed for good, as
// CallQueuedHandler does.
func ShouldBeUnique(id UniqueIDFunc) Option {
	return func(c *Class) {
		c.Unique = &Unique{ID: id, Store: storeOf(c.Unique)}
	}
}

// ShouldBeUniqueUntilProcessing declares ShouldBeUniqueUntilProcessing:
// the lock is released just before the handler runs.
func ShouldBeUniqueUntilProcessing(id UniqueIDFunc) Option {
	return func(c *Class) {
		c.Unique = &Unique{ID: id, UntilProcessing: true, Store: storeOf(c.Unique)}
	}
}

// UniqueVia names the cache store the class's uniqueVia() returns (as
// config/cache.php names it: "database", "redis"...). Give it with
// ShouldBeUnique or ShouldBeUniqueUntilProcessing, in any order.
func UniqueVia(store string) Option {
	return func(c *Class) {
		if c.Unique == nil {
			c.Unique = &Unique{}
		}
		c.Unique.Store = store
	}
}

func storeOf(u *Unique) string {
	if u == nil {
		return ""
	}
	return u.Store
}

// DeleteWhenMissingModels declares public $deleteWhenMissingModels = true:
// a job whose model is gone is deleted without running and without a
// failure (Laravel 8-12 read it from the class; 13 from the payload).
func DeleteWhenMissingModels() Option {
	return func(c *Class) { c.DeleteWhenMissingModels = true }
}

// Models names the tables of model classes the job holds. Before each run
// the worker looks up every model of the command's own properties whose
// class is named here (collections are not checked: PHP loads what is
// left of them); a missing one is Laravel's ModelNotFoundException.
func Models(models ...Model) Option {
	return func(c *Class) { c.Models = append(c.Models, models...) }
}

// UniqueIDProperty is a uniqueId() that returns a public property, as
// `return $this->productId;` does (converted to a string as PHP does:
// ints in decimal, true as "1", false and null as "").
func UniqueIDProperty(name string) UniqueIDFunc {
	return func(cmd *payload.Command) (string, error) {
		v, err := cmd.Object.Prop(name)
		if err != nil {
			return "", fmt.Errorf("uniqueId: %w", err)
		}
		id, err := phpString(v.Deref())
		if err != nil {
			return "", fmt.Errorf("uniqueId: %w", err)
		}
		return id, nil
	}
}

// UniqueIDOf adapts a typed uniqueId(): the command is decoded into a T
// (as Register does) and f computes the id from it.
func UniqueIDOf[T any](f func(cmd *T) string) UniqueIDFunc {
	return func(cmd *payload.Command) (string, error) {
		var v T
		if err := cmd.Decode(&v); err != nil {
			return "", err
		}
		return f(&v), nil
	}
}

// phpString is PHP's string conversion of a scalar. Floats are refused:
// PHP writes them with 14 significant digits, which Go would have to
// imitate; a UniqueIDFunc can format one as the app needs.
func phpString(v *phpserialize.Value) (string, error) {
	switch {
	case v == nil || v.Kind == phpserialize.KindNull:
		return "", nil
	case v.Kind == phpserialize.KindString:
		return string(v.Str), nil
	case v.Kind == phpserialize.KindInt:
		return strconv.FormatInt(v.Int, 10), nil
	case v.Kind == phpserialize.KindBool:
		if v.Bool {
			return "1", nil
		}
		return "", nil
	case v.Kind == phpserialize.KindEnum:
		return "", fmt.Errorf("an enum (%s) is not a string in PHP; write a UniqueIDFunc", v.Class)
	}
	return "", fmt.Errorf("a PHP %s has no string form Go can reproduce; write a UniqueIDFunc", v.Kind)
}

// ModelKey is the primary key column of m.
func (m Model) ModelKey() string {
	if m.Key == "" {
		return "id"
	}
	return m.Key
}

// model returns the declaration for a model class (PHP class names are
// case-insensitive).
func (c Class) model(class string) (Model, bool) {
	for _, m := range c.Models {
		if strings.EqualFold(m.Class, class) {
			return m, true
		}
	}
	return Model{}, false
}

func (c Class) validate(displayName string) error {
	for _, m := range c.Models {
		if m.Class == "" || m.Table == "" {
			return fmt.Errorf("handlers: %s: a Model needs a Class and a Table", displayName)
		}
	}
	for _, m := range c.Middleware {
		if err := m.validate(); err != nil {
			return fmt.Errorf("%w (registering %s)", err, displayName)
		}
	}
	return nil
}
