package phpclass

import (
	"encoding/json"
	"strings"

	"github.com/laraworker/laraworker/laravel/bridgeproto"
)

// App is what the reflection script read from a booted Laravel app.
type App struct {
	// Version is the app's Laravel version (Application::VERSION).
	Version string `json:"version"`
	AppDir  string `json:"app_dir"`
	Bridge  Bridge `json:"bridge"`
	Cache   Cache  `json:"cache"`
	// Classes are the classes asked for, or those the bridge routes.
	Classes []Class `json:"classes"`
	// UnmatchedRoutes are bridge routes that matched no job class.
	UnmatchedRoutes []string `json:"unmatched_routes"`
	// Skipped are the classes Options.AllJobs left out: queued classes
	// Laravel wraps in another command (listeners, mailables,
	// notifications, broadcast events) and files that do not load.
	Skipped []Skipped `json:"skipped"`
	// JobClasses are the app's concrete job classes under app/, listed
	// only when a class asked for does not exist (for a "did you mean").
	JobClasses []string `json:"job_classes"`
}

// Skipped is a class Options.AllJobs did not read as a job class.
type Skipped struct {
	Class string `json:"class"`
	Why   string `json:"why"`
}

// Bridge is the laraworker bridge as the app has it.
type Bridge struct {
	// Installed: the bridge's service provider is registered in the app.
	Installed bool `json:"installed"`
	// Config: config('laraworker') exists.
	Config bool `json:"config"`
	// Capabilities are what the installed bridge does beyond routing
	// (LaraworkerServiceProvider::CAPABILITIES), e.g. "failed".
	Capabilities []string    `json:"capabilities"`
	Queue        *string     `json:"queue"`
	Routes       []RouteSpec `json:"routes"`
}

// The bridge's capabilities (LaraworkerServiceProvider::CAPABILITIES):
// what an installed bridge does beyond routing classes to Go's queue
// (package bridgeproto describes each).
const (
	CapFailed         = bridgeproto.CapFailed
	CapBatchCallbacks = bridgeproto.CapBatchCallbacks
	CapChainCatch     = bridgeproto.CapChainCatch
	CapMiddleware     = bridgeproto.CapMiddleware
	CapUnique         = bridgeproto.CapUnique
	CapModels         = bridgeproto.CapModels
)

// Has reports whether the installed bridge has a capability.
func (b Bridge) Has(capability string) bool {
	if !b.Installed {
		return false
	}
	for _, c := range b.Capabilities {
		if c == capability {
			return true
		}
	}
	return false
}

// RouteSpec is one entry of config('laraworker.jobs').
type RouteSpec struct {
	Class      string  `json:"class"`
	Queue      *string `json:"queue"`
	Connection *string `json:"connection"`
}

// Cache is the app's cache configuration: the stores' drivers.
type Cache struct {
	Default *string            `json:"default"`
	Limiter *string            `json:"limiter"`
	Stores  map[string]*string `json:"stores"`
}

// Driver is the driver of a store ("" when unknown); "" names the default
// store.
func (c Cache) Driver(store string) string {
	if store == "" && c.Default != nil {
		store = *c.Default
	}
	if d := c.Stores[store]; d != nil {
		return *d
	}
	return ""
}

// Class is one reflected job class.
type Class struct {
	Name string `json:"class"`
	// RoutedBy are the bridge routes (a class, parent, interface or trait)
	// that match the class; empty for a class named on the command line.
	RoutedBy []string `json:"routed_by"`
	// BridgeRoutes, for a class named on the command line, are the bridge
	// routes that match it all the same (its jobs carry the bridge's
	// record even when the bridge records only routed classes).
	BridgeRoutes []string `json:"bridge_routes"`
	// Error says why the class could not be reflected (then nothing else
	// is set).
	Error    string   `json:"error"`
	File     string   `json:"file"`
	Abstract bool     `json:"abstract"`
	Parents  []string `json:"parents"`
	// Traits and Interfaces hold the Laravel traits and contracts that
	// matter, by short name (Batchable, ShouldBeUnique...).
	Traits     map[string]bool `json:"traits"`
	AllTraits  []string        `json:"all_traits"`
	Interfaces map[string]bool `json:"interfaces"`
	Attributes []Attribute     `json:"attributes"`
	Properties []Property      `json:"properties"`
	// Methods are the methods Laravel looks for that the class has, by
	// name (failed, middleware, backoff, retryUntil, uniqueId...).
	Methods    map[string]Method `json:"methods"`
	Middleware *Middleware       `json:"middleware"`
	// UniqueIDProperty is the property uniqueId() returns, when its body
	// is `return $this->x;` (or a string cast of it).
	UniqueIDProperty *string    `json:"unique_id_property"`
	UniqueVia        *UniqueVia `json:"unique_via"`
}

// Is reports whether the class implements a contract, by short name.
func (c *Class) Is(iface string) bool { return c.Interfaces[iface] }

// Uses reports whether the class uses a Laravel trait, by short name.
func (c *Class) Uses(trait string) bool { return c.Traits[trait] }

// HasMethod reports whether the class (not the framework) defines method.
func (c *Class) HasMethod(name string) bool {
	m, ok := c.Methods[name]
	return ok && !m.Framework
}

// Property returns the class's own (not the framework's) property name.
func (c *Class) Property(name string) (Property, bool) {
	for _, p := range c.Properties {
		if p.Name == name && !p.Framework {
			return p, true
		}
	}
	return Property{}, false
}

// DataProperties are the properties a handler reads: the class's own, not
// the framework's (Queueable, InteractsWithQueue...) nor its queue options
// ($tries, $backoff...: the payload carries those).
func (c *Class) DataProperties() []Property {
	var out []Property
	for _, p := range c.Properties {
		if !p.Framework && !p.Option {
			out = append(out, p)
		}
	}
	return out
}

// Attribute returns the class's PHP attribute by name.
func (c *Class) Attribute(name string) (Attribute, bool) {
	for _, a := range c.Attributes {
		if strings.EqualFold(a.Name, name) {
			return a, true
		}
	}
	return Attribute{}, false
}

// Models are the Eloquent models the class's properties hold (by their
// declared type, or an @var of an untyped property), one per model class.
func (c *Class) Models() []Model {
	var out []Model
	seen := map[string]bool{}
	for _, p := range c.Properties {
		if p.Framework {
			continue
		}
		for _, m := range p.models() {
			if !seen[strings.ToLower(m.Class)] {
				seen[strings.ToLower(m.Class)] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// Attribute is a PHP attribute on the class (#[DeleteWhenMissingModels]).
type Attribute struct {
	Name string `json:"name"`
	// Args are its arguments: a JSON list, or an object for named ones;
	// null when they name a constant the app does not define.
	Args json.RawMessage `json:"args"`
}

// Method is a method the class has.
type Method struct {
	DeclaredIn string `json:"declared_in"`
	Framework  bool   `json:"framework"`
	Line       int    `json:"line"`
}

// Property is one non-static property.
type Property struct {
	Name string `json:"name"`
	// Visibility is public, protected or private.
	Visibility string `json:"visibility"`
	// DeclaredIn is the class or trait that declares it.
	DeclaredIn string `json:"declared_in"`
	// Framework: declared by Laravel (Queueable's $queue...): not the
	// job's own data. The other fields are empty then.
	Framework bool `json:"framework"`
	// Option: a queue option ($tries, $backoff, $timeout...).
	Option   bool  `json:"option"`
	Type     *Type `json:"type"`
	Promoted bool  `json:"promoted"`
	Readonly bool  `json:"readonly"`
	// HasDefault: the property declares a default (an untyped property
	// always does: null). Laravel 9.4+ leaves a property out of the
	// payload while it holds that default.
	HasDefault bool `json:"has_default"`
	// Default is the default as JSON (enum cases as {"enum","case"});
	// DefaultJSONOK is false when JSON cannot hold it (INF, NAN).
	Default       json.RawMessage `json:"default"`
	DefaultJSONOK bool            `json:"default_json_ok"`
	// DefaultPHP is the default as PHP source.
	DefaultPHP string `json:"default_php"`
	// DefaultSerialized is the default as PHP's serialize() writes it
	// (what a job that left the property out holds, even where JSON
	// cannot say it: INF, bytes that are not UTF-8, enums in arrays).
	DefaultSerialized []byte `json:"default_serialized"`
	// MayBeUninitialized: the property is typed, has no default, and the
	// constructor does not always assign it (or the class unsets it), so
	// a job may leave it out: PHP serializes no uninitialised property.
	MayBeUninitialized bool `json:"may_be_uninitialized"`
	// ParamDefaultPHP is a promoted property's constructor default.
	ParamDefaultPHP string `json:"param_default_php"`
	// DocType is the @var of its doc comment.
	DocType string `json:"doc_type"`
	// DocModel is the model an untyped property's @var names.
	DocModel *Model `json:"doc_model"`
}

func (p Property) models() []Model {
	var out []Model
	if p.Type != nil {
		for _, n := range p.Type.Names {
			if n.Model != nil {
				out = append(out, *n.Model)
			}
		}
	}
	if p.DocModel != nil {
		out = append(out, *p.DocModel)
	}
	return out
}

// Type is a declared type.
type Type struct {
	Text     string     `json:"text"`
	Nullable bool       `json:"nullable"`
	Names    []TypeName `json:"names"`
}

// Single is the one non-null type of a (nullable) named type; false for
// unions.
func (t *Type) Single() (TypeName, bool) {
	var out []TypeName
	for _, n := range t.Names {
		if !(n.Builtin && n.Name == "null") {
			out = append(out, n)
		}
	}
	if len(out) != 1 {
		return TypeName{}, false
	}
	return out[0], true
}

// TypeName is one type of a declared type.
type TypeName struct {
	Name    string `json:"name"`
	Builtin bool   `json:"builtin"`
	// Kind, for a class: date, enum, model, model-collection, collection,
	// closure, object, missing.
	Kind        string   `json:"kind"`
	Model       *Model   `json:"model"`
	EnumBacking string   `json:"enum_backing"`
	EnumCases   []string `json:"enum_cases"`
}

// Model is an Eloquent model class and where its rows live.
type Model struct {
	Class      string  `json:"class"`
	Table      string  `json:"table"`
	Key        string  `json:"key"`
	Connection *string `json:"connection"`
}

// Middleware is what middleware() returns, as read from its source.
type Middleware struct {
	DeclaredIn string `json:"declared_in"`
	File       string `json:"file"`
	Line       int    `json:"line"`
	// Parsed: the method is `return [...];`, its items below; else Why.
	Parsed bool             `json:"parsed"`
	Why    string           `json:"why"`
	Items  []MiddlewareItem `json:"items"`
}

// MiddlewareItem is one entry of middleware()'s array.
type MiddlewareItem struct {
	// Kind is "class" (new X(...), X::factory(...)), "closure" or
	// "unknown" (an expression audit cannot read; Why says which).
	Kind  string `json:"kind"`
	Class string `json:"class"`
	// Factory is the static method of X::factory(...).
	Factory string `json:"factory"`
	Expr    string `json:"expr"`
	Why     string `json:"why"`
	Exists  bool   `json:"exists"`
	Args    []Arg  `json:"args"`
	// Calls are the methods chained on the instance (releaseAfter...).
	Calls   []string `json:"calls"`
	Limiter *Limiter `json:"limiter"`
}

// Arg is a middleware constructor argument: a literal value, or source.
type Arg struct {
	Literal bool            `json:"literal"`
	Value   json.RawMessage `json:"value"`
	Expr    string          `json:"expr"`
}

// Limiter is a RateLimited middleware's named limiter.
type Limiter struct {
	Name       string `json:"name"`
	Registered bool   `json:"registered"`
}

// UniqueVia is what uniqueVia() returns, as read from its source.
type UniqueVia struct {
	// Store is the cache store it names; nil when it names none Go can
	// read (Default then says whether it is the default store).
	Store   *string `json:"store"`
	Default bool    `json:"default"`
	Expr    string  `json:"expr"`
}
