package phpclass_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/phpclass"
	"github.com/laraworker/laraworker/internal/testutil/phptest"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
)

func reflect(t *testing.T, app string, classes ...string) *phpclass.App {
	t.Helper()
	a, err := phpclass.Reflect(context.Background(), phpclass.Options{AppDir: app, Classes: classes, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func class(t *testing.T, a *phpclass.App, name string) *phpclass.Class {
	t.Helper()
	c := a.Class(name)
	if c == nil {
		t.Fatalf("%s was not read", name)
	}
	if c.Error != "" {
		t.Fatalf("%s: %s", name, c.Error)
	}
	return c
}

func prop(t *testing.T, c *phpclass.Class, name string) phpclass.Property {
	t.Helper()
	p, ok := c.Property(name)
	if !ok {
		t.Fatalf("%s has no property %s", c.Name, name)
	}
	return p
}

// TestReflectTestApp: the Laravel 8.83 test app's classes as its own PHP
// declares them: properties with visibility, types, defaults and promotion;
// the framework's properties told apart; contracts, traits, methods;
// middleware() read from its source; models with their tables.
func TestReflectTestApp(t *testing.T) {
	phptest.NeedPHP(t)
	app := phptest.CopyApp(t)
	// Attributes are read by name even where Laravel has no such class
	// (#[DeleteWhenMissingModels] is 11.3+).
	phptest.WriteFile(t, filepath.Join(app, "app", "Jobs", "AttributedJob.php"), `<?php

namespace App\Jobs;

use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Queue\Attributes\DeleteWhenMissingModels;

#[DeleteWhenMissingModels]
#[\App\Support\Tagged(name: 'reports', weight: 2)]
class AttributedJob implements ShouldQueue
{
}
`)
	a := reflect(t, app, `App\Jobs\AttributedJob`, `App\Jobs\PrivatePropsJob`, `App\Jobs\ModelsJob`, `App\Jobs\EnumsDatesJob`, `App\Jobs\UniqueJob`,
		`App\Jobs\Audit\MiddlewareJob`, `App\Jobs\Audit\FailedHookJob`, `App\Jobs\DeletableModelJob`, `App\Jobs\Nope`)
	if a.Version != "8.83.26" {
		t.Errorf("version %q", a.Version)
	}
	if want := []string{phpclass.CapFailed, phpclass.CapBatchCallbacks, phpclass.CapChainCatch, phpclass.CapUnique, phpclass.CapModels, phpclass.CapMiddleware, bridgeproto.CapRecordAll}; !a.Bridge.Installed || !slices.Equal(a.Bridge.Capabilities, want) {
		t.Errorf("bridge %+v: want installed (the test app loads it), with the capabilities LaraworkerServiceProvider::CAPABILITIES lists: %v", a.Bridge, want)
	}
	if b := reflect(t, phptest.CopyAppWithoutBridge(t), `App\Jobs\NoopJob`).Bridge; b.Installed {
		t.Errorf("bridge %+v in an app without it", b)
	}
	if a.Cache.Driver("") != "database" || a.Cache.Driver("redis") != "redis" {
		t.Errorf("cache %+v", a.Cache)
	}

	pp := class(t, a, `App\Jobs\PrivatePropsJob`)
	var own []string
	for _, p := range pp.DataProperties() {
		own = append(own, p.Visibility+" "+p.Type.Text+" $"+p.Name+" = "+p.DefaultPHP)
	}
	want := []string{"private string $secret = 'private value'", "protected int $level = 3", "protected ?array $options = null", "public string $visible = 'public value'"}
	if !slices.Equal(own, want) {
		t.Errorf("PrivatePropsJob properties\n got %q\nwant %q", own, want)
	}
	var framework []string
	for _, p := range pp.Properties {
		if p.Framework {
			framework = append(framework, p.Name)
		}
	}
	for _, name := range []string{"job", "connection", "queue", "chained", "middleware", "delay"} {
		if !slices.Contains(framework, name) {
			t.Errorf("$%s (Queueable, InteractsWithQueue) not told apart as the framework's: %v", name, framework)
		}
	}
	if !pp.Uses("InteractsWithQueue") || !pp.Uses("SerializesModels") || !pp.Uses("Dispatchable") || pp.Uses("Batchable") {
		t.Errorf("traits %v", pp.Traits)
	}

	mj := class(t, a, `App\Jobs\ModelsJob`)
	if p := prop(t, mj, "podcast"); !p.Promoted || p.HasDefault || p.Type.Names[0].Kind != "model" || p.Type.Names[0].Model.Table != "podcasts" {
		t.Errorf("$podcast %+v", p)
	}
	if p := prop(t, mj, "users"); p.Type.Names[0].Kind != "model-collection" {
		t.Errorf("$users %+v", p.Type)
	}
	if m := mj.Models(); len(m) != 1 || m[0].Class != `App\Models\Podcast` || m[0].Table != "podcasts" || m[0].Key != "id" {
		t.Errorf("models %+v", m)
	}

	ed := class(t, a, `App\Jobs\EnumsDatesJob`)
	kinds := map[string]string{}
	for _, p := range ed.DataProperties() {
		kinds[p.Name] = p.Type.Names[0].Kind
	}
	if kinds["status"] != "enum" || kinds["suit"] != "enum" || kinds["carbon"] != "date" || kinds["dateTime"] != "date" {
		t.Errorf("kinds %v", kinds)
	}

	u := class(t, a, `App\Jobs\UniqueJob`)
	if !u.Is("ShouldBeUnique") || u.Is("ShouldBeUniqueUntilProcessing") || u.UniqueIDProperty == nil || *u.UniqueIDProperty != "productId" {
		t.Errorf("UniqueJob: unique %v, uniqueId() returns %v", u.Interfaces, u.UniqueIDProperty)
	}
	if p := prop(t, u, "uniqueFor"); !p.Option || string(p.Default) != "600" {
		t.Errorf("$uniqueFor %+v", p)
	}

	mw := class(t, a, `App\Jobs\Audit\MiddlewareJob`).Middleware
	if mw == nil || !mw.Parsed || len(mw.Items) != 4 {
		t.Fatalf("middleware %+v", mw)
	}
	got := []string{}
	for _, it := range mw.Items {
		got = append(got, it.Kind+" "+it.Class)
	}
	want = []string{`class Illuminate\Queue\Middleware\WithoutOverlapping`, `class Illuminate\Queue\Middleware\RateLimited`, `class App\Jobs\Middleware\EnsureTokenIsValid`, "closure "}
	if !slices.Equal(got, want) {
		t.Errorf("middleware items\n got %q\nwant %q", got, want)
	}
	if it := mw.Items[0]; !slices.Equal(it.Calls, []string{"releaseAfter"}) || it.Args[0].Expr != "$this->customerId" {
		t.Errorf("WithoutOverlapping %+v", it)
	}
	if it := mw.Items[1]; it.Limiter == nil || it.Limiter.Name != "customer-api" || it.Limiter.Registered || string(it.Args[0].Value) != `"customer-api"` {
		t.Errorf("RateLimited %+v", it)
	}

	fh := class(t, a, `App\Jobs\Audit\FailedHookJob`)
	if !fh.HasMethod("failed") || !fh.HasMethod("backoff") || fh.HasMethod("middleware") {
		t.Errorf("FailedHookJob methods %v", fh.Methods)
	}
	if p := prop(t, fh, "notBefore"); !p.Type.Nullable || p.Type.Names[0].Kind != "date" || string(p.Default) != "null" {
		t.Errorf("$notBefore %+v", p)
	}
	if p := prop(t, class(t, a, `App\Jobs\DeletableModelJob`), "deleteWhenMissingModels"); string(p.Default) != "true" {
		t.Errorf("$deleteWhenMissingModels %+v", p)
	}
	aj := class(t, a, `App\Jobs\AttributedJob`)
	if _, ok := aj.Attribute(`Illuminate\Queue\Attributes\DeleteWhenMissingModels`); !ok {
		t.Errorf("attributes %+v", aj.Attributes)
	}
	if at, ok := aj.Attribute(`App\Support\Tagged`); !ok || string(at.Args) != `{"name":"reports","weight":2}` {
		t.Errorf("named attribute arguments: %+v", aj.Attributes)
	}
	if n := a.Class(`App\Jobs\Nope`); n == nil || !strings.Contains(n.Error, "no such class") {
		t.Errorf("a missing class: %+v", n)
	}
	// A class asked for that the app lacks brings the app's concrete job
	// classes along (laraworker work's "did you mean"); not otherwise.
	if !slices.Contains(a.JobClasses, `App\Jobs\NoopJob`) || !slices.Contains(a.JobClasses, `App\Jobs\Routed\MonthlyReport`) ||
		slices.Contains(a.JobClasses, `App\Jobs\Routed\BaseReport`) || slices.Contains(a.JobClasses, `App\Models\Podcast`) {
		t.Errorf("job classes %v: want the concrete job classes under app/ only", a.JobClasses)
	}
	if b := reflect(t, app, `App\Jobs\NoopJob`); b.JobClasses != nil {
		t.Errorf("job classes listed with every class found: %v", b.JobClasses)
	}
}

// TestReflectNamedClassesBridgeRoutes: a class named on the command line
// says which of the bridge's routes match it (its class, a parent, an
// interface, a trait), so laraworker work knows its jobs carry the
// bridge's record even when the bridge records only routed classes.
func TestReflectNamedClassesBridgeRoutes(t *testing.T) {
	phptest.NeedPHP(t)
	app := phptest.CopyApp(t)
	phptest.WriteFile(t, filepath.Join(app, "config", "laraworker.php"),
		"<?php\n\nreturn ['jobs' => [App\\Jobs\\Routed\\BaseReport::class, Illuminate\\Bus\\Batchable::class, App\\Jobs\\NoopJob::class => 'other']];\n")
	a := reflect(t, app, `App\Jobs\Routed\MonthlyReport`, `App\Jobs\NoopJob`, `App\Jobs\ScalarsJob`, `App\Jobs\BatchMemberJob`)
	for name, want := range map[string]string{
		`App\Jobs\Routed\MonthlyReport`: `App\Jobs\Routed\BaseReport`, // a parent
		`App\Jobs\NoopJob`:              `App\Jobs\NoopJob`,
		`App\Jobs\ScalarsJob`:           "",
		`App\Jobs\BatchMemberJob`:       `Illuminate\Bus\Batchable`, // a trait
	} {
		if got := strings.Join(class(t, a, name).BridgeRoutes, ","); got != want {
			t.Errorf("%s: bridge routes %q, want %q", name, got, want)
		}
	}
}

// TestReflectBridgeRoutes: without class names, the classes are those the
// bridge routes: a class, and every job class under app/ that extends a
// routed parent or uses a routed trait; a route that matches nothing is
// named.
func TestReflectBridgeRoutes(t *testing.T) {
	phptest.NeedPHP(t)
	app := phptest.CopyApp(t)
	phptest.BridgeConfig(t, app, `App\Jobs\NoopJob::class`, `App\Jobs\Routed\BaseReport::class => 'reports'`,
		`Illuminate\Bus\Batchable::class`, `Illuminate\Contracts\Queue\ShouldBeEncrypted::class`, `App\Jobs\Concerns\RecordsRun::class`)
	a := reflect(t, app)
	routed := map[string][]string{}
	for _, c := range a.Classes {
		routed[c.Name] = c.RoutedBy
	}
	want := map[string]string{
		`App\Jobs\NoopJob`:              `App\Jobs\NoopJob,App\Jobs\Concerns\RecordsRun`,
		`App\Jobs\Routed\MonthlyReport`: `App\Jobs\Routed\BaseReport,App\Jobs\Concerns\RecordsRun`,
		`App\Jobs\Routed\UniqueReport`:  `App\Jobs\Routed\BaseReport,App\Jobs\Concerns\RecordsRun`,
		`App\Jobs\BatchMemberJob`:       `Illuminate\Bus\Batchable,App\Jobs\Concerns\RecordsRun`,
		`App\Jobs\MovableJob`:           `Illuminate\Bus\Batchable,App\Jobs\Concerns\RecordsRun`,
		`App\Jobs\EncryptedJob`:         `Illuminate\Contracts\Queue\ShouldBeEncrypted,App\Jobs\Concerns\RecordsRun`,
	}
	for class, by := range want {
		if strings.Join(routed[class], ",") != by {
			t.Errorf("%s routed by %v, want %s", class, routed[class], by)
		}
	}
	if _, ok := routed[`App\Jobs\Routed\BaseReport`]; ok {
		t.Error("the abstract BaseReport is listed")
	}
	if _, ok := routed[`App\Jobs\Middleware\EnsureTokenIsValid`]; ok {
		t.Error("a middleware class (no job) is listed")
	}
	if len(a.Bridge.Routes) != 5 || a.Bridge.Queue == nil || *a.Bridge.Queue != "go" {
		t.Errorf("bridge %+v", a.Bridge)
	}

	// A file under app/ whose class does not load is no routed job.
	phptest.WriteFile(t, filepath.Join(app, "app", "Legacy", "Orphan.php"), "<?php\n\nnamespace App\\Legacy;\n\nclass Orphan extends \\Gone\\BaseJob\n{\n}\n")
	phptest.BridgeConfig(t, app, `App\Jobs\NoopJob::class`, `App\Support\RunRecorder::class`)
	a = reflect(t, app)
	if !slices.Equal(a.UnmatchedRoutes, []string{`App\Support\RunRecorder`}) {
		t.Errorf("unmatched routes %v", a.UnmatchedRoutes)
	}
}

// TestReflectErrors: a folder that is no app, an app whose boot fails and
// a boot that hangs each end with an error naming the cause.
func TestReflectErrors(t *testing.T) {
	phptest.NeedPHP(t)
	if _, err := phpclass.Reflect(context.Background(), phpclass.Options{AppDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "holds no artisan") {
		t.Errorf("no app: %v", err)
	}
	app := phptest.CopyApp(t)
	phptest.WriteFile(t, filepath.Join(app, "config", "laraworker.php"), "<?php\n\nreturn ['jobs' => ['App\\\\Jobs\\\\Nope']];\n")
	_, err := phpclass.Reflect(context.Background(), phpclass.Options{AppDir: app})
	if err == nil || !strings.Contains(err.Error(), "no such class, interface or trait") {
		t.Errorf("a boot that throws: %v", err)
	}
	phptest.WriteFile(t, filepath.Join(app, "config", "laraworker.php"), "<?php\n\nsleep(30);\n\nreturn [];\n")
	started := time.Now()
	_, err = phpclass.Reflect(context.Background(), phpclass.Options{AppDir: app, Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "timed out") || time.Since(started) > 10*time.Second {
		t.Errorf("a boot that hangs: %v after %s", err, time.Since(started))
	}
}

// TestReflectBootsAsArtisanDoes: the class reader boots the app with what
// its artisan requires before bootstrap/app.php, beside a vendor/ that
// loads no framework (Debian's app after `composer require` of the bridge)
// and in Composer's standard layout.
func TestReflectBootsAsArtisanDoes(t *testing.T) {
	phptest.NeedPHP(t)
	for name, setup := range map[string]func(testing.TB, string){
		"stray vendor/autoload.php": phptest.StrayVendorAutoload,
		"composer layout":           phptest.ComposerLayout,
	} {
		t.Run(name, func(t *testing.T) {
			app := phptest.CopyApp(t)
			setup(t, app)
			a := reflect(t, app, `App\Jobs\PrivatePropsJob`)
			if a.Version != "8.83.26" || class(t, a, `App\Jobs\PrivatePropsJob`).Name != `App\Jobs\PrivatePropsJob` {
				t.Errorf("version %q, classes %+v", a.Version, a.Classes)
			}
		})
	}
	app := phptest.CopyApp(t)
	phptest.WriteFile(t, filepath.Join(app, "artisan"), "<?php\n\nrequire __DIR__.'/vendor/autoload.php';\n$app = require_once __DIR__.'/bootstrap/app.php';\n")
	_, err := phpclass.Reflect(context.Background(), phpclass.Options{AppDir: app, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if err == nil || !strings.Contains(err.Error(), "vendor/autoload.php, which does not exist (run composer install)") {
		t.Errorf("artisan's autoloader missing: %v", err)
	}
}

// TestReflectOutputIsData: the JSON the script prints is what App holds,
// with no field the model drops (a renamed key would silently read as
// empty).
func TestReflectOutputIsData(t *testing.T) {
	phptest.NeedPHP(t)
	a := reflect(t, phptest.CopyApp(t), `App\Jobs\Audit\MiddlewareJob`)
	raw, err := json.Marshal(a.Classes[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"properties"`, `"interfaces"`, `"traits"`, `"methods"`, `"middleware"`, `"declared_in"`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("%s missing from %s", key, raw)
		}
	}
}

// TestReflectAllJobs: with AllJobs and no class names, the classes are
// every job class of the app, bridge or not: the concrete ShouldQueue
// classes under app/ and under the app's other psr-4 folders, each with
// the routes that match it; listeners, mailables and notifications
// (queued inside Laravel's wrappers) and files that do not load are
// skipped with the reason.
func TestReflectAllJobs(t *testing.T) {
	phptest.NeedPHP(t)
	app := phptest.CopyAppWithoutBridge(t)
	// A second psr-4 folder, as a modular app declares it.
	composer, err := os.ReadFile(filepath.Join(app, "composer.json"))
	if err != nil {
		t.Fatal(err)
	}
	phptest.WriteFile(t, filepath.Join(app, "composer.json"), strings.Replace(string(composer), `"App\\": "app/"`, `"App\\": "app/", "Modules\\": "modules/"`, 1))
	autoload := filepath.Join(app, "bootstrap", "autoload.php")
	b, err := os.ReadFile(autoload)
	if err != nil {
		t.Fatal(err)
	}
	phptest.WriteFile(t, autoload, string(b)+"\nspl_autoload_register(function ($class) {\n    if (strncmp($class, 'Modules\\\\', 8) === 0) {\n        $f = dirname(__DIR__).'/modules/'.str_replace('\\\\', '/', substr($class, 8)).'.php';\n        if (is_file($f)) {\n            require $f;\n        }\n    }\n});\n")
	phptest.WriteFile(t, filepath.Join(app, "modules", "Billing", "ChargeJob.php"), "<?php\n\nnamespace Modules\\Billing;\n\nclass ChargeJob implements \\Illuminate\\Contracts\\Queue\\ShouldQueue\n{\n    public int $amount = 5;\n}\n")
	phptest.WriteFile(t, filepath.Join(app, "app", "Listeners", "AuditLogin.php"), "<?php\n\nnamespace App\\Listeners;\n\nclass AuditLogin implements \\Illuminate\\Contracts\\Queue\\ShouldQueue\n{\n    public function handle($event)\n    {\n    }\n}\n")
	phptest.WriteFile(t, filepath.Join(app, "app", "Mail", "Welcome.php"), "<?php\n\nnamespace App\\Mail;\n\nclass Welcome extends \\Illuminate\\Mail\\Mailable implements \\Illuminate\\Contracts\\Queue\\ShouldQueue\n{\n}\n")
	phptest.WriteFile(t, filepath.Join(app, "app", "Legacy", "Orphan.php"), "<?php\n\nnamespace App\\Legacy;\n\nclass Orphan extends \\Gone\\BaseJob\n{\n}\n")
	provider := filepath.Join(app, "app", "Providers", "HooksServiceProvider.php")
	p, err := os.ReadFile(provider)
	if err != nil {
		t.Fatal(err)
	}
	phptest.WriteFile(t, provider, strings.Replace(string(p), "        Event::listen(JobFailed::class,", "        Event::listen('auth.login', \\App\\Listeners\\AuditLogin::class);\n        Event::listen(JobFailed::class,", 1))

	a, err := phpclass.Reflect(context.Background(), phpclass.Options{AppDir: app, AllJobs: true, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Bridge.Installed {
		t.Fatal("the bridge is installed in a copy without it")
	}
	names := map[string]bool{}
	for _, c := range a.Classes {
		names[c.Name] = true
		if c.Error != "" {
			t.Errorf("%s: %s", c.Name, c.Error)
		}
	}
	for _, want := range []string{`App\Jobs\NoopJob`, `App\Jobs\ModelsJob`, `App\Jobs\Routed\MonthlyReport`, `App\Jobs\Hooks\OverlapJob`, `Modules\Billing\ChargeJob`} {
		if !names[want] {
			t.Errorf("%s not read", want)
		}
	}
	for _, unwanted := range []string{`App\Jobs\Routed\BaseReport`, `App\Jobs\Middleware\EnsureTokenIsValid`, `App\Listeners\AuditLogin`, `App\Mail\Welcome`, `App\Legacy\Orphan`, `App\Models\User`} {
		if names[unwanted] {
			t.Errorf("%s read as a job class", unwanted)
		}
	}
	skipped := map[string]string{}
	for _, s := range a.Skipped {
		skipped[s.Class] = s.Why
	}
	for class, why := range map[string]string{
		`App\Listeners\AuditLogin`: `an event listener: Laravel queues it inside Illuminate\Events\CallQueuedListener`,
		`App\Mail\Welcome`:         `a mailable: Laravel queues it inside Illuminate\Mail\SendQueuedMailable`,
		`App\Legacy\Orphan`:        `it does not load: Error: Class "Gone\BaseJob" not found`,
	} {
		if skipped[class] != why {
			t.Errorf("%s skipped because %q, want %q", class, skipped[class], why)
		}
	}

	// With the bridge: the same classes, the routed ones marked.
	app = phptest.CopyApp(t)
	phptest.BridgeConfig(t, app, `App\Jobs\Routed\BaseReport::class => 'reports'`, `App\Support\RunRecorder::class`)
	a, err = phpclass.Reflect(context.Background(), phpclass.Options{AppDir: app, AllJobs: true, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	if err != nil {
		t.Fatal(err)
	}
	routed := map[string]string{}
	for _, c := range a.Classes {
		routed[c.Name] = strings.Join(c.RoutedBy, ",")
	}
	if len(routed) < 30 || routed[`App\Jobs\Routed\MonthlyReport`] != `App\Jobs\Routed\BaseReport` || routed[`App\Jobs\NoopJob`] != "" {
		t.Errorf("%d classes, routed %v", len(routed), routed)
	}
	if !slices.Equal(a.UnmatchedRoutes, []string{`App\Support\RunRecorder`}) {
		t.Errorf("unmatched routes %v", a.UnmatchedRoutes)
	}
}

// TestReflectUninitialized: a typed property without a default may be
// left out of a job (PHP serializes no uninitialised property) unless the
// constructor always assigns it: at the top of its body before any
// return, through parent::__construct, or by promotion; never when the
// class unsets it. Defaults come with their serialize() form.
func TestReflectUninitialized(t *testing.T) {
	phptest.NeedPHP(t)
	app := phptest.CopyAppWithoutBridge(t)
	phptest.WriteFile(t, filepath.Join(app, "app", "Jobs", "Init", "BaseInit.php"), `<?php

namespace App\Jobs\Init;

abstract class BaseInit
{
    public int $byParent;
    public int $notByParent;

    public function __construct()
    {
        $this->byParent = 1;
        foreach ([1] as $i) {
            $this->notByParent = $i;
        }
    }
}
`)
	phptest.WriteFile(t, filepath.Join(app, "app", "Jobs", "Init", "InitJob.php"), `<?php

namespace App\Jobs\Init;

use Illuminate\Contracts\Queue\ShouldQueue;

class InitJob extends BaseInit implements ShouldQueue
{
    use \Illuminate\Bus\Queueable, \Illuminate\Queue\SerializesModels;

    public int $always;
    public ?string $nullableAlways;
    public int $conditional;
    public int $braceless;
    public ?string $never;
    public int $afterReturn;
    public int $unsetLater;
    public int $withDefault = 1;
    public float $limit = INF;
    public $untyped;

    public function __construct(public int $promoted, bool $flag)
    {
        parent::__construct();
        $this->always = 1;
        $this->nullableAlways = null;
        if ($flag) {
            $this->conditional = 2;
        }
        if ($flag) $this->braceless = 2;
        $this->unsetLater = 3;
        if (! $flag) {
            return;
        }
        $this->afterReturn = 4;
    }

    public function forget()
    {
        unset($this->unsetLater);
    }
}
`)
	c := class(t, reflect(t, app, `App\Jobs\Init\InitJob`), `App\Jobs\Init\InitJob`)
	for name, want := range map[string]bool{
		"always": false, "nullableAlways": false, "promoted": false, "byParent": false, "withDefault": false, "untyped": false, "limit": false,
		"conditional": true, "braceless": true, "never": true, "afterReturn": true, "unsetLater": true, "notByParent": true,
	} {
		if got := prop(t, c, name).MayBeUninitialized; got != want {
			t.Errorf("$%s: may be uninitialised %v, want %v", name, got, want)
		}
	}
	if p := prop(t, c, "limit"); p.DefaultJSONOK || string(p.DefaultSerialized) != "d:INF;" {
		t.Errorf("$limit = INF: JSON ok %v, serialized %q", p.DefaultJSONOK, p.DefaultSerialized)
	}
	if p := prop(t, c, "withDefault"); string(p.DefaultSerialized) != "i:1;" {
		t.Errorf("$withDefault = 1: serialized %q", p.DefaultSerialized)
	}
}
