package jobgen_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/phptest"
	"github.com/laraworker/laraworker/jobgen"
	"github.com/laraworker/laraworker/phpclass"
)

// jobClasses lists the job classes under app/Jobs by their PSR-4 names
// (Concerns and Middleware hold no jobs).
func jobClasses(t *testing.T, app string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(app, "app", "Jobs")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".php") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if strings.HasPrefix(rel, "Concerns") || strings.HasPrefix(rel, "Middleware") {
			return nil
		}
		out = append(out, `App\Jobs\`+strings.ReplaceAll(strings.TrimSuffix(rel, ".php"), "/", `\`))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// generated is a module holding one package per generated class.
type generated struct {
	dir     string
	classes map[string]string // class => its package's import path
	types   map[string]string // class => its struct's name
}

// generate writes jobgen's file for every concrete job class of app into
// a fresh module that requires this repository through a replace.
func generate(t *testing.T, app *phpclass.App) generated {
	t.Helper()
	g := generated{dir: t.TempDir(), classes: map[string]string{}, types: map[string]string{}}
	root := phptest.RepoRoot()
	goMod := "module example.com/gen\n\ngo 1.24\n\nrequire github.com/laraworker/laraworker v0.0.0\n\nreplace github.com/laraworker/laraworker => " + root + "\n"
	phptest.WriteFile(t, filepath.Join(g.dir, "go.mod"), goMod)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	phptest.WriteFile(t, filepath.Join(g.dir, "go.sum"), string(sum))
	for i := range app.Classes {
		c := &app.Classes[i]
		if c.Error != "" {
			t.Fatalf("%s: %s", c.Name, c.Error)
		}
		if c.Abstract || !c.Is("ShouldQueue") {
			continue
		}
		pkg := fmt.Sprintf("job%d", i)
		src, err := jobgen.Generate(app, c, jobgen.Options{Package: pkg})
		if err != nil {
			t.Fatal(err)
		}
		phptest.WriteFile(t, filepath.Join(g.dir, pkg, "job.go"), string(src))
		g.classes[c.Name] = "example.com/gen/" + pkg
		g.types[c.Name] = jobgen.GoName(c.Name[strings.LastIndexByte(c.Name, '\\')+1:])
	}
	return g
}

// decoderMain is a program that decodes payload files with the generated
// structs, directly and through each class's registration (whose skeleton
// handler returns nil once the command decoded).
func (g generated) decoderMain() string {
	var imports, entries strings.Builder
	classes := make([]string, 0, len(g.classes))
	for c := range g.classes {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for i, c := range classes {
		fmt.Fprintf(&imports, "\tp%d %q\n", i, g.classes[c])
		fmt.Fprintf(&entries, "\t%q: {p%[2]d.Register%[3]s, func(c *payload.Command) (any, error) { var v p%[2]d.%[3]s; err := c.Decode(&v); return v, err }},\n", c, i, g.types[c])
	}
	return `package main

import (
	"context"
	"encoding/json"
	"os"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/payload"
` + imports.String() + `)

type class struct {
	register func(*handlers.Registry)
	decode   func(*payload.Command) (any, error)
}

var classes = map[string]class{
` + entries.String() + `}

func main() {
	var keys []struct{ Key, Cipher string }
	if err := json.Unmarshal([]byte(os.Args[1]), &keys); err != nil {
		panic(err)
	}
	encs := []*payload.Encrypter{nil}
	for _, k := range keys {
		raw, err := payload.ParseKey(k.Key)
		if err != nil {
			panic(err)
		}
		e, err := payload.NewEncrypter(raw, k.Cipher)
		if err != nil {
			panic(err)
		}
		encs = append(encs, e)
	}
	reg := handlers.NewRegistry()
	for _, c := range classes {
		c.register(reg)
	}
	out := json.NewEncoder(os.Stdout)
	for _, file := range os.Args[2:] {
		res := map[string]any{"file": file}
		raw, err := os.ReadFile(file)
		if err != nil {
			panic(err)
		}
		p, err := payload.Parse(raw)
		var c class
		ok := err == nil
		if ok {
			c, ok = classes[p.Name()]
		}
		if !ok {
			res["skip"] = true
			out.Encode(res)
			continue
		}
		res["class"] = p.Name()
		var cmd *payload.Command
		var enc *payload.Encrypter
		for _, e := range encs {
			if cmd, err = payload.DecodeCommand(p, e); err == nil {
				enc = e
				break
			}
		}
		if err != nil {
			res["error"] = "command: " + err.Error()
			out.Encode(res)
			continue
		}
		if v, err := c.decode(cmd); err != nil {
			res["error"] = err.Error()
		} else {
			res["value"] = v
		}
		h, _ := reg.Lookup(p.Name())
		if err := h.Handle(context.Background(), handlers.NewJob(1, "default", 1, p, handlers.Env{Encrypter: enc})); err != nil {
			res["handler_error"] = err.Error()
		}
		out.Encode(res)
	}
}
`
}

// decoded is one payload file as the generated code read it.
type decoded struct {
	File         string         `json:"file"`
	Skip         bool           `json:"skip"`
	Class        string         `json:"class"`
	Error        string         `json:"error"`
	HandlerError string         `json:"handler_error"`
	Value        map[string]any `json:"value"`
}

type key struct{ Key, Cipher string }

// build compiles the module (go vet too) and runs the decoder on files.
func (g generated) decode(t *testing.T, keys []key, files []string) map[string]decoded {
	t.Helper()
	phptest.WriteFile(t, filepath.Join(g.dir, "main.go"), g.decoderMain())
	goTool := filepath.Join(runtimeGOROOT(t), "bin", "go")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	for _, args := range [][]string{{"build", "-o", "decoder", "."}, {"vet", "./..."}} {
		cmd := exec.CommandContext(ctx, goTool, args...)
		cmd.Dir, cmd.Env = g.dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s of the generated code: %v\n%s", args[0], err, out)
		}
	}
	keyJSON, _ := json.Marshal(keys)
	cmd := exec.CommandContext(ctx, filepath.Join(g.dir, "decoder"), append([]string{string(keyJSON)}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("decoder: %v\n%s", err, stderr.String())
	}
	res := map[string]decoded{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var d decoded
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber() // int64s beyond 2^53 stay exact
		if err := dec.Decode(&d); err != nil {
			t.Fatal(err)
		}
		res[filepath.Base(d.File)] = d
	}
	return res
}

func runtimeGOROOT(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// payloadFiles are the .json files of dir.
func payloadFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no payloads in %s: %v", dir, err)
	}
	return files
}

// checkDecoded: every payload of a generated class decoded, directly and
// through its registration; want holds field values for some files.
func checkDecoded(t *testing.T, got map[string]decoded, minimum int, want map[string]map[string]any) {
	t.Helper()
	n := 0
	for file, d := range got {
		if d.Skip {
			continue
		}
		n++
		if d.Error != "" || d.HandlerError != "" {
			t.Errorf("%s (%s): %s %s", file, d.Class, d.Error, d.HandlerError)
		}
	}
	if n < minimum {
		t.Errorf("only %d payloads were decoded, want at least %d", n, minimum)
	}
	for file, fields := range want {
		d, ok := got[file]
		if !ok || d.Skip {
			t.Errorf("%s was not decoded", file)
			continue
		}
		for field, v := range fields {
			gotJSON, _ := json.Marshal(fieldAt(d.Value, field))
			wantJSON, _ := json.Marshal(v)
			if !bytes.Equal(gotJSON, wantJSON) {
				t.Errorf("%s: %s = %s, want %s", file, field, gotJSON, wantJSON)
			}
		}
	}
}

// edgeJob declares what gen must also write compiling Go for: a unique
// class whose uniqueId() is code, uniqueVia() a named store, untyped,
// union, closure, object, collection and enum-defaulted properties, a
// default JSON cannot hold, a model named by @var only, a property name
// that is a Go keyword and one that clashes with another's Go name.
const edgeJob = `<?php

namespace App\Jobs\Extra;

use App\Enums\Status;
use App\Models\Podcast;
use Illuminate\Contracts\Queue\ShouldBeUniqueUntilProcessing;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Queue\Attributes\DeleteWhenMissingModels;
use Illuminate\Support\Collection;
use Illuminate\Support\Facades\Cache;

#[DeleteWhenMissingModels]
class EdgeJob implements ShouldQueue, ShouldBeUniqueUntilProcessing
{
    use \Illuminate\Bus\Queueable, \Illuminate\Queue\SerializesModels;

    public $untyped = 5;
    public int|string $either = 'a';
    public ?\Closure $callback = null;
    public ?\ArrayObject $bag = null;
    public Collection $ids;
    public Status $status = Status::Active;
    public ?Status $maybe = null;
    public float $limit = INF;
    /** @var Podcast */
    public $podcast;
    public string $type = 'x';
    public string $user_id = 'a';
    public string $userId = 'b';

    public function uniqueId()
    {
        return $this->type.'-'.$this->userId;
    }

    public function uniqueVia()
    {
        return Cache::store('redis');
    }

    public function displayName()
    {
        return 'edge';
    }

    public function handle()
    {
    }
}
`

// fieldAt follows a dotted path (User.ID) into a decoded value.
func fieldAt(v map[string]any, path string) any {
	var cur any = v
	for _, name := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[name]
	}
	return cur
}

// TestGeneratedCodeDecodes83: gen's file for every job class of the
// Laravel 8.83 test app compiles (and passes go vet), and decodes every
// payload the app wrote (testdata/payloads) without error, with the values
// PHP held.
func TestGeneratedCodeDecodes83(t *testing.T) {
	phptest.NeedPHP(t)
	if testing.Short() {
		t.Skip("builds a module (-short)")
	}
	app := phptest.CopyApp(t)
	// A class with what the test app's classes lack, to compile only: no
	// payload of it exists.
	phptest.WriteFile(t, filepath.Join(app, "app", "Jobs", "Extra", "EdgeJob.php"), edgeJob)
	a, err := phpclass.Reflect(context.Background(), phpclass.Options{AppDir: app, Classes: jobClasses(t, app)})
	if err != nil {
		t.Fatal(err)
	}
	g := generate(t, a)
	if _, ok := g.classes[`App\Jobs\Extra\EdgeJob`]; !ok {
		t.Fatal("EdgeJob was not generated")
	}
	if len(g.classes) < 20 {
		t.Fatalf("only %d classes generated", len(g.classes))
	}
	keys := []key{
		{"base64:bGFyYXdvcmtlciBmaXh0dXJlIGtleSwgMzIgYnl0ZXM=", "AES-256-CBC"},
		{"base64:bGFyYXdvcmtlciBmaXh0dXJlIGtleSwgMzIgYnl0ZXM=", "AES-256-GCM"},
		{"base64:bGFyYXdvcmtlciBrZXkxNg==", "AES-128-CBC"},
		{"base64:bGFyYXdvcmtlciBrZXkxNg==", "AES-128-GCM"},
	}
	got := g.decode(t, keys, payloadFiles(t, filepath.Join(phptest.RepoRoot(), "testdata", "payloads")))
	checkDecoded(t, got, 25, map[string]map[string]any{
		"scalars.json": {"PodcastID": 42, "Negative": -7, "Ratio": 0.1, "Huge": 1e25, "Title": `Héllo / wörld "quoted" ✓`, "Flag": true,
			"Nothing": nil, "Tags": []any{"news", "tech"}, "Meta": map[string]any{"7": "int-key", "empty": []any{}, "nested": map[string]any{"x": 1, "y": []any{1.25, "z"}}}},
		"models.json":                {"Podcast": map[string]any{"Class": `App\Models\Podcast`, "ID": 42, "Relations": nil, "Connection": "sqlite", "CollectionClass": nil}},
		"enums-dates.json":           {"Status": "Archived", "Priority": "High", "Suit": "Spades", "Carbon": "2024-02-29T13:14:15.123456Z", "CarbonImmutable": "2024-07-01T08:00:00+02:00", "DateTime": "2001-02-03T04:05:06+02:00"},
		"private-props.json":         {"Secret": "private value", "Level": 3, "Options": map[string]any{"mode": "strict"}, "Visible": "public value"},
		"encrypted-aes-128-gcm.json": {"Secret": "top secret ✓", "PodcastID": 42},
	})
}

// fixtureApp is the test app with the job classes and enums of a real
// Laravel app's fixtures (appDir: its app/ folder). Only Laravel 8.83 is
// installed here, so Laravel 11's Illuminate\Foundation\Queue\Queueable
// (the four queue traits in one, as 11+ declares it) is added for them.
func fixtureApp(t *testing.T, appDir string) string {
	t.Helper()
	app := phptest.CopyApp(t)
	for _, dir := range []string{"Jobs", "Enums"} {
		if err := os.RemoveAll(filepath.Join(app, "app", dir)); err != nil {
			t.Fatal(err)
		}
		phptest.CopyTree(t, filepath.Join(appDir, dir), filepath.Join(app, "app", dir), nil)
	}
	phptest.WriteFile(t, filepath.Join(app, "stubs", "Queueable.php"), `<?php

namespace Illuminate\Foundation\Queue;

use Illuminate\Bus\Queueable as QueueableByBus;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

trait Queueable
{
    use Dispatchable, InteractsWithQueue, QueueableByBus, SerializesModels;
}
`)
	autoload := filepath.Join(app, "bootstrap", "autoload.php")
	b, err := os.ReadFile(autoload)
	if err != nil {
		t.Fatal(err)
	}
	phptest.WriteFile(t, autoload, string(b)+"\nspl_autoload_register(function ($class) {\n    if ($class === 'Illuminate\\\\Foundation\\\\Queue\\\\Queueable') {\n        require dirname(__DIR__).'/stubs/Queueable.php';\n    }\n});\n")
	return app
}

// TestGeneratedCodeDecodesFixtures: the same for the classes of the real
// Laravel 12.67 app (testdata/laravel-12.67) and, when this machine has
// the shared fixtures, of the real 10.50 app, with the payloads they
// wrote: every property that held its declared default was left out.
func TestGeneratedCodeDecodesFixtures(t *testing.T) {
	phptest.NeedPHP(t)
	if testing.Short() {
		t.Skip("builds a module (-short)")
	}
	for _, fixture := range []struct{ name, dir string }{
		{"12.67", filepath.Join(phptest.RepoRoot(), "testdata", "laravel-12.67")},
		{"10.50", "/work/shared/fixtures/laravel-10.50"},
	} {
		t.Run(fixture.name, func(t *testing.T) {
			if _, err := os.Stat(fixture.dir); err != nil && fixture.name != "12.67" {
				t.Skipf("no %s fixtures here", fixture.name)
			}
			decodeFixtures(t, fixture.dir)
		})
	}
}

func decodeFixtures(t *testing.T, dir string) {
	app := fixtureApp(t, filepath.Join(dir, "app"))
	a, err := phpclass.Reflect(context.Background(), phpclass.Options{AppDir: app, Classes: jobClasses(t, app)})
	if err != nil {
		t.Fatal(err)
	}
	g := generate(t, a)
	if len(g.classes) != 14 {
		t.Fatalf("%d classes generated, want the fixture app's 14", len(g.classes))
	}
	var manifest struct {
		AppKey string `json:"app_key"`
		Cipher string `json:"cipher"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "payloads", "_manifest.json"))
	if err != nil || json.Unmarshal(raw, &manifest) != nil {
		t.Fatalf("manifest: %v", err)
	}
	got := g.decode(t, []key{{manifest.AppKey, manifest.Cipher}}, payloadFiles(t, filepath.Join(dir, "payloads")))
	checkDecoded(t, got, 16, map[string]map[string]any{
		// $untouchedDefault held its default: not in the payload.
		"scalars.json": {"Count": 42, "Big": 9223372036854775807, "Whole": 2, "UntouchedDefault": 5, "ChangedDefault": 6,
			"SecretNote": "protected promoted", "PrivateCount": 3, "Nothing": nil, "Tags": []any{"red", "green"}},
		"models.json":      {"User.Class": `App\Models\User`, "User.ID": 1, "Others.ID": []any{2, 3}, "Reason": "welcome"},
		"dates_enums.json": {"When": "2026-03-04T05:06:07.123456+01:00", "Status": "Paid", "Priority": "High", "Plain": "2026-01-02T03:04:05+05:30"},
		"encrypted.json":   {"Secret": "s3cr3t-✓", "N": 7},
		"unique.json":      {"ProductID": 1},
		"noop.json":        {"Record": true},
	})
}
