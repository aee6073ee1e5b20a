package console

import (
	"context"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console/internal/testapp"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/phpclass"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// routeApp is what the app's PHP would say of the classes: a unique job,
// a job with only middleware, a plain one, and the app's job classes.
func routeApp() *phpclass.App {
	unique := phpclass.Class{Name: `App\Jobs\Unique`, Interfaces: map[string]bool{"ShouldQueue": true, "ShouldBeUnique": true}}
	mw := phpclass.Class{Name: `App\Jobs\Limited`, Interfaces: map[string]bool{"ShouldQueue": true},
		Middleware: &phpclass.Middleware{Parsed: true, Items: []phpclass.MiddlewareItem{{Kind: "class", Class: `Illuminate\Queue\Middleware\WithoutOverlapping`, Exists: true}}}}
	plain := phpclass.Class{Name: `App\Jobs\Plain`, Interfaces: map[string]bool{"ShouldQueue": true}}
	missing := phpclass.Class{Name: `App\Reports\Monthly`, Error: "no such class (the app's autoloader does not find it)"}
	typo := phpclass.Class{Name: `App\Jobs\Plian`, Error: "no such class (the app's autoloader does not find it)"}
	return &phpclass.App{Version: "8.83.26", Classes: []phpclass.Class{unique, mw, plain, missing, typo},
		JobClasses: []string{`App\Jobs\Limited`, `App\Jobs\Plain`, `App\Jobs\Unique`}}
}

func registry(names ...string) *handlers.Registry {
	reg := handlers.NewRegistry()
	for _, n := range names {
		reg.Handle(n, handlers.Noop())
	}
	return reg
}

// TestRouteClassChecks: what the start check decides from the classes
// the app's PHP read: a --route to a class the app lacks is an error
// (with a "did you mean"), unless jobs of that name are queued (a
// displayName() that is not a class); a Go registration only warns; a
// --route class whose declarations need the bridge's record is refused
// without it, accepted with a bridge that records every job or with
// consent.
func TestRouteClassChecks(t *testing.T) {
	_, q := testapp.SqliteApp(t)
	raw := []byte(strings.Replace(string(mustPayload(t, `App\Jobs\Any`)), `"displayName":"App\\Jobs\\Any"`, `"displayName":"App\\Reports\\Monthly"`, 1))
	if _, err := q.Push(t.Context(), jobqueue.PushItem{Payload: raw}); err != nil {
		t.Fatal(err)
	}
	app, ctx, queues := routeApp(), context.Background(), []string{"default"}
	check := func(reg *handlers.Registry, bridge *appconfig.BridgeConfig, setup routeSetup) routeFindings {
		t.Helper()
		f, err := checkRouteClasses(ctx, q, "sqlite", queues, reg, app, bridge, setup)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	cli := func(classes ...string) routeSetup { return routeSetup{cli: classes} }

	f := check(registry(`App\Jobs\Plian`, `App\Reports\Monthly`, `App\Jobs\Plain`), nil, cli(`App\Jobs\Plian`, `App\Reports\Monthly`, `App\Jobs\Plain`))
	if len(f.errors) != 1 || !strings.Contains(f.errors[0], `route App\Jobs\Plian: the app has no such class`) || !strings.Contains(f.errors[0], `did you mean App\Jobs\Plain?`) {
		t.Errorf("a --route to a class the app lacks: %q", f.errors)
	}
	if f := check(registry(`App\Jobs\Plian`), nil, routeSetup{}); len(f.errors) != 0 || len(f.warnings) != 1 {
		t.Errorf("a Go registration of a class the app lacks: errors %q, warnings %q; want one warning", f.errors, f.warnings)
	}

	f = check(registry(`App\Jobs\Unique`, `App\Jobs\Limited`), nil, cli(`App\Jobs\Unique`, `App\Jobs\Limited`))
	if len(f.errors) != 2 || !strings.Contains(f.errors[1], "ShouldBeUnique: its lock would stay") || !strings.Contains(f.errors[0], "middleware WithoutOverlapping: the job would run without it") ||
		!strings.Contains(f.errors[1], "install the laraworker bridge") {
		t.Errorf("without the bridge's record: %q", f.errors)
	}
	old := &appconfig.BridgeConfig{Installed: true, Capabilities: []string{"unique", "models", "middleware"}}
	if f := check(registry(`App\Jobs\Unique`), old, cli(`App\Jobs\Unique`)); len(f.errors) != 1 || !strings.Contains(f.errors[0], "update the bridge if it has no such setting") {
		t.Errorf("a bridge that records routed classes only: %q", f.errors)
	}
	all := &appconfig.BridgeConfig{Installed: true, Capabilities: []string{"unique", "models", "middleware", "record-all"}, Record: "all"}
	if f := check(registry(`App\Jobs\Unique`, `App\Jobs\Limited`), all, cli(`App\Jobs\Unique`, `App\Jobs\Limited`)); len(f.errors) != 0 {
		t.Errorf("a bridge that records every job: %q", f.errors)
	}
	consent := routeSetup{cli: []string{`App\Jobs\Unique`, `App\Jobs\Limited`}, optIn: []string{`app\jobs\unique`}, mwOptIn: []string{"*"}}
	if f := check(registry(`App\Jobs\Unique`, `App\Jobs\Limited`), nil, consent); len(f.errors) != 0 {
		t.Errorf("with consent: %q", f.errors)
	}
	if f := check(registry(`App\Jobs\Unique`), nil, routeSetup{cli: []string{`App\Jobs\Unique`}, mwOptIn: []string{"*"}}); len(f.errors) != 1 {
		t.Errorf("--run-without-php-middleware does not consent to a unique lock: %q", f.errors)
	}
}

func mustPayload(t *testing.T, class string) []byte {
	t.Helper()
	raw, err := payload.BuildObjectPayload(phpserialize.Object(class), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestBridgeQueues: without --queue, a worker serves the queues the
// bridge routes classes to on its connection, and the connection's
// default queue too when one of its routes is no class the bridge routes.
func TestBridgeQueues(t *testing.T) {
	b := &appconfig.BridgeConfig{Installed: true, Queue: "go", Jobs: []appconfig.BridgeRoute{
		{Class: `App\Jobs\A`}, {Class: `App\Jobs\B`, Queue: "reports"}, {Class: `App\Jobs\C`, Connection: "redis", Queue: "elsewhere"}, {Class: `App\Jobs\D`, Queue: "go"}}}
	for _, c := range []struct {
		routes []string
		want   string
	}{
		{[]string{`App\Jobs\A`, `App\Jobs\b`}, "go,reports"},
		{[]string{`App\Jobs\A`, `App\Jobs\Other`}, "go,reports,default"},
	} {
		if got := strings.Join(bridgeQueues(b, "database", "default", registry(c.routes...)), ","); got != c.want {
			t.Errorf("routes %v: queues %s, want %s", c.routes, got, c.want)
		}
	}
	if got := bridgeQueues(&appconfig.BridgeConfig{Installed: true, Queue: "go"}, "database", "default", registry(`App\Jobs\A`)); got != nil {
		t.Errorf("a bridge without routes: %v", got)
	}
	if got := bridgeQueues(nil, "database", "default", registry(`App\Jobs\A`)); got != nil {
		t.Errorf("no bridge: %v", got)
	}
}
