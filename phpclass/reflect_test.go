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

	"github.com/laraworker/laraworker/internal/phptest"
	"github.com/laraworker/laraworker/phpclass"
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
	if want := []string{phpclass.CapFailed, phpclass.CapBatchCallbacks, phpclass.CapChainCatch, phpclass.CapUnique, phpclass.CapModels, phpclass.CapMiddleware}; !a.Bridge.Installed || !slices.Equal(a.Bridge.Capabilities, want) {
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
