package handlers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Handler runs one job. Returning nil deletes it (unless the handler called
// Release or Fail); returning an error is a job exception, which Laravel's
// rules turn into a release with backoff or a failure.
type Handler interface {
	Handle(ctx context.Context, job *Job) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, job *Job) error

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, job *Job) error { return f(ctx, job) }

// Middleware wraps a Handler, like net/http middleware.
type Middleware func(Handler) Handler

// Registry routes jobs to handlers by displayName (the job class). Class
// names match case-insensitively, as PHP class names do.
type Registry struct {
	mu         sync.RWMutex
	handlers   map[string]route // by lower-cased class name
	exact      map[string]route // by the registered spelling: no lower-casing per job
	middleware []Middleware
}

type route struct {
	name    string
	handler Handler
	class   Class
	// origin is the user's own function, whose location failed_jobs shows
	// when an error carries no stack.
	origin any
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{handlers: map[string]route{}, exact: map[string]route{}}
}

// find is the route of a class: by its registered spelling (what jobs
// carry), else case-insensitively, as PHP compares class names. The
// caller holds mu.
func (r *Registry) find(displayName string) (route, bool) {
	if rt, ok := r.exact[displayName]; ok {
		return rt, true
	}
	rt, ok := r.handlers[strings.ToLower(displayName)]
	return rt, ok
}

// Handle registers h for the job class displayName (e.g.
// `App\Jobs\ProcessPodcast`); opts declare what the PHP class is beyond
// its properties (ShouldBeUnique, DeleteWhenMissingModels, Models).
// Registering a class twice, or an invalid option, panics, as
// http.ServeMux does, because it is a programming error.
func (r *Registry) Handle(displayName string, h Handler, opts ...Option) {
	r.handle(displayName, h, h, opts)
}

func (r *Registry) handle(displayName string, h Handler, origin any, opts []Option) {
	if displayName == "" || h == nil {
		panic("handlers: Handle needs a class name and a handler")
	}
	var class Class
	for _, o := range opts {
		o(&class)
	}
	if err := class.validate(displayName); err != nil {
		panic(err.Error())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := strings.ToLower(displayName)
	if _, dup := r.handlers[key]; dup {
		panic(fmt.Sprintf("handlers: %s registered twice", displayName))
	}
	rt := route{name: displayName, handler: h, origin: origin, class: class}
	r.handlers[key] = rt
	r.exact[displayName] = rt
}

// HandleFunc registers a function.
func (r *Registry) HandleFunc(displayName string, f func(ctx context.Context, job *Job) error, opts ...Option) {
	r.handle(displayName, HandlerFunc(f), f, opts)
}

// Register registers a typed handler: the command is decoded into a T
// (fields tagged `php:"name"`) before f runs; a command that does not fit T
// fails the job with the decoding error.
func Register[T any](r *Registry, displayName string, f func(ctx context.Context, job *Job, cmd *T) error, opts ...Option) {
	r.handle(displayName, HandlerFunc(func(ctx context.Context, job *Job) error {
		var cmd T
		if err := job.Decode(&cmd); err != nil {
			job.Fail(err)
			return err
		}
		return f(ctx, job, &cmd)
	}), f, opts)
}

// Class returns what the registration of a class declared about it (the
// zero Class when none, or when the class has no handler).
func (r *Registry) Class(displayName string) Class {
	r.mu.RLock()
	defer r.mu.RUnlock()
	rt, _ := r.find(displayName)
	return rt.class
}

// Unique lists the registered classes that declared ShouldBeUnique, with
// their declarations.
func (r *Registry) Unique() map[string]Unique {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := map[string]Unique{}
	for _, rt := range r.handlers {
		if rt.class.Unique != nil {
			out[rt.name] = *rt.class.Unique
		}
	}
	return out
}

// Middleware lists the registered classes that declared job middleware
// (WithoutOverlapping, RateLimited, ...), with their declarations.
func (r *Registry) Middleware() map[string][]JobMiddleware {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := map[string][]JobMiddleware{}
	for _, rt := range r.handlers {
		if len(rt.class.Middleware) > 0 {
			out[rt.name] = rt.class.Middleware
		}
	}
	return out
}

// Origin returns the function or Handler registered for a class, as the
// user wrote it (before middleware and typed decoding), nil if none.
func (r *Registry) Origin(displayName string) any {
	r.mu.RLock()
	defer r.mu.RUnlock()
	rt, _ := r.find(displayName)
	return rt.origin
}

// Use appends middleware; the first one added is the outermost.
func (r *Registry) Use(mw ...Middleware) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.middleware = append(r.middleware, mw...)
}

// Lookup returns the handler for a class wrapped in the middleware.
func (r *Registry) Lookup(displayName string) (Handler, error) {
	h, _, ok := r.Resolve(displayName)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoHandler, displayName)
	}
	return h, nil
}

// Resolve is Lookup and Class in one lookup: the handler wrapped in the
// middleware, what the registration declared, and whether the class has
// a handler at all.
func (r *Registry) Resolve(displayName string) (Handler, Class, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	rt, ok := r.find(displayName)
	if !ok {
		return nil, Class{}, false
	}
	h := rt.handler
	for i := len(r.middleware) - 1; i >= 0; i-- {
		h = r.middleware[i](h)
	}
	return h, rt.class, true
}

// Has reports whether a class has a handler.
func (r *Registry) Has(displayName string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.find(displayName)
	return ok
}

// Route returns the class name as it was registered (PHP class names are
// case-insensitive; the registration's spelling is the canonical one).
func (r *Registry) Route(displayName string) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	rt, ok := r.find(displayName)
	return rt.name, ok
}

// Names lists the registered classes, sorted: the worker reserves only
// these.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.handlers))
	for _, rt := range r.handlers {
		names = append(names, rt.name)
	}
	sort.Strings(names)
	return names
}
