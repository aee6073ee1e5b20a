package jobgen_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/jobgen"
	"github.com/laraworker/laraworker/internal/phpclass"
	"github.com/laraworker/laraworker/internal/testutil/phptest"
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
	"github.com/laraworker/laraworker/laravel/payload"
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
		if err != nil {
			res["error"] = "payload: " + err.Error()
			out.Encode(res)
			continue
		}
		c, ok := classes[p.Name()]
		if !ok {
			res["skip"] = true // a job of a class that was not generated
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

// payloadFiles are the job payloads of dir's .json files: a payload file
// itself, each payload of a file that lists several (a batch's members,
// NAME-N.json), the payload of a failed_jobs row (NAME.payload.json). A
// job_batches row or a manifest holds none; any other shape stops the test,
// so no payload is left out unseen.
func payloadFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no payloads in %s: %v", dir, err)
	}
	tmp := t.TempDir()
	var out []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		var list []json.RawMessage
		var obj map[string]json.RawMessage
		switch {
		case json.Unmarshal(raw, &list) == nil:
			for i, p := range list {
				out = append(out, filepath.Join(tmp, fmt.Sprintf("%s-%d.json", name, i+1)))
				phptest.WriteFile(t, out[len(out)-1], string(p))
			}
		case json.Unmarshal(raw, &obj) != nil:
			t.Fatalf("%s: not JSON", f)
		case obj["job"] != nil:
			out = append(out, f)
		case obj["payload"] != nil && obj["failed_at"] != nil:
			var p string
			if err := json.Unmarshal(obj["payload"], &p); err != nil {
				t.Fatalf("%s: failed_jobs payload: %v", f, err)
			}
			out = append(out, filepath.Join(tmp, name+".payload.json"))
			phptest.WriteFile(t, out[len(out)-1], p)
		case obj["total_jobs"] != nil, obj["appKey"] != nil, obj["app_key"] != nil:
			// a job_batches row, a manifest: no job in them
		default:
			t.Fatalf("%s: neither a payload, a list of them, a failed_jobs row, a job_batches row nor a manifest", f)
		}
	}
	return out
}

// checkDecoded: every payload of a generated class decoded, directly and
// through its registration; want holds field values for some files.
func checkDecoded(t *testing.T, got map[string]decoded, minimum int, want map[string]map[string]any) {
	t.Helper()
	n := 0
	var skipped []string
	for file, d := range got {
		if d.Skip {
			skipped = append(skipped, file)
			continue
		}
		n++
		if d.Error != "" || d.HandlerError != "" {
			t.Errorf("%s (%s): %s %s", file, d.Class, d.Error, d.HandlerError)
		}
	}
	t.Logf("%d payloads decoded", n)
	if n < minimum {
		t.Errorf("only %d payloads were decoded, want at least %d (skipped: %v)", n, minimum, skipped)
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
	checkDecoded(t, got, 29, map[string]map[string]any{
		"scalars.json": {"PodcastID": 42, "Negative": -7, "Ratio": 0.1, "Huge": 1e25, "Title": `Héllo / wörld "quoted" ✓`, "Flag": true,
			"Nothing": nil, "Tags": []any{"news", "tech"}, "Meta": map[string]any{"7": "int-key", "empty": []any{}, "nested": map[string]any{"x": 1, "y": []any{1.25, "z"}}}},
		"models.json":                {"Podcast": map[string]any{"Class": `App\Models\Podcast`, "ID": 42, "Relations": nil, "Connection": "sqlite", "CollectionClass": nil}},
		"enums-dates.json":           {"Status": "Archived", "Priority": "High", "Suit": "Spades", "Carbon": "2024-02-29T13:14:15.123456Z", "CarbonImmutable": "2024-07-01T08:00:00+02:00", "DateTime": "2001-02-03T04:05:06+02:00"},
		"private-props.json":         {"Secret": "private value", "Level": 3, "Options": map[string]any{"mode": "strict"}, "Visible": "public value"},
		"encrypted-aes-128-gcm.json": {"Secret": "top secret ✓", "PodcastID": 42},
	})
}

// fixtureApp is the test app with the job classes and enums of a real
// Laravel app's fixtures (appDir: its app/ folder), and the classes of
// extra (a folder of classes for app/Jobs, as namespaced there). Only
// Laravel 8.83 is installed here, so Laravel 11's
// Illuminate\Foundation\Queue\Queueable (the four queue traits in one, as
// 11+ declares it) is added for them.
func fixtureApp(t *testing.T, appDir string, extra ...string) string {
	t.Helper()
	app := phptest.CopyApp(t)
	for _, dir := range []string{"Jobs", "Enums"} {
		if err := os.RemoveAll(filepath.Join(app, "app", dir)); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(appDir, dir)); err == nil {
			phptest.CopyTree(t, filepath.Join(appDir, dir), filepath.Join(app, "app", dir), nil)
		}
	}
	for _, dir := range extra {
		phptest.CopyTree(t, dir, filepath.Join(app, "app", "Jobs"), nil)
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

// TestGeneratedCodeDecodesFixtures: the same for every job class of the
// real Laravel 10.50 and 12.67 apps (testdata/laravel-10.50, -12.67) and
// of the real 13.26 app (internal/jobgen/testdata/laravel-13.26), with every
// payload they wrote: every property that held its declared default was
// left out.
func TestGeneratedCodeDecodesFixtures(t *testing.T) {
	phptest.NeedPHP(t)
	if testing.Short() {
		t.Skip("builds a module (-short)")
	}
	root := phptest.RepoRoot()
	// Every payload of the fixtures: batch members and failed_jobs rows too.
	for fixture, payloads := range map[string]int{"10.50": 24, "12.67": 26} {
		t.Run(fixture, func(t *testing.T) {
			dir := filepath.Join(root, "testdata", "laravel-"+fixture)
			app := fixtureApp(t, filepath.Join(dir, "app"))
			got := decodeApp(t, app, 14, manifestKeys(t, dir), payloadFiles(t, filepath.Join(dir, "payloads")))
			checkDecoded(t, got, payloads, map[string]map[string]any{
				// $untouchedDefault held its default: not in the payload.
				"scalars.json": {"Count": 42, "Big": 9223372036854775807, "Whole": 2, "UntouchedDefault": 5, "ChangedDefault": 6,
					"SecretNote": "protected promoted", "PrivateCount": 3, "Nothing": nil, "Tags": []any{"red", "green"}},
				"models.json":      {"User.Class": `App\Models\User`, "User.ID": 1, "Others.ID": []any{2, 3}, "Reason": "welcome"},
				"dates_enums.json": {"When": "2026-03-04T05:06:07.123456+01:00", "Status": "Paid", "Priority": "High", "Plain": "2026-01-02T03:04:05+05:30"},
				"encrypted.json":   {"Secret": "s3cr3t-✓", "N": 7},
				"unique.json":      {"ProductID": 1},
				"noop.json":        {"Record": true},
			})
		})
	}
	t.Run("13.26", func(t *testing.T) {
		dir := filepath.Join(root, "internal", "jobgen", "testdata", "laravel-13.26")
		app := fixtureApp(t, filepath.Join(dir, "app"), filepath.Join(dir, "features", "classes"))
		files := append(payloadFiles(t, filepath.Join(dir, "payloads")), renamed(t, "route-", payloadFiles(t, filepath.Join(dir, "payloads", "route")))...)
		files = append(files, featureRows(t, filepath.Join(dir, "features"))...)
		got := decodeApp(t, app, 11, nil, files)
		checkDecoded(t, got, 19, map[string]map[string]any{
			"hello-1.json":      {"N": 1, "At": "2026-12-01T10:01:00+01:00"},
			"boom-5.json":       {"N": 2},
			"route-boom-3.json": {"N": 1},
			"modelgone-1.json":  {"User.Class": `App\Models\User`, "User.ID": 5, "User.Connection": "mysql"},
			"debounced-3.json":  {"N": 3},
		})
	})
}

// manifestKeys is the APP_KEY and cipher of a fixture's _manifest.json.
func manifestKeys(t *testing.T, dir string) []key {
	t.Helper()
	var manifest struct {
		AppKey string `json:"app_key"`
		Cipher string `json:"cipher"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "payloads", "_manifest.json"))
	if err != nil || json.Unmarshal(raw, &manifest) != nil {
		t.Fatalf("manifest: %v", err)
	}
	return []key{{manifest.AppKey, manifest.Cipher}}
}

// renamed copies files to a temporary folder, prefix before each name
// (the decoder names its results by file name).
func renamed(t *testing.T, prefix string, files []string) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(dir, prefix+filepath.Base(f))
		phptest.WriteFile(t, name, string(raw))
		out = append(out, name)
	}
	return out
}

// featureRows writes the payload of every jobs row of dir/*.json (one
// JSON row a line) to a file of its own, NAME-N.json.
func featureRows(t *testing.T, dir string) []string {
	t.Helper()
	out := t.TempDir()
	var files []string
	rows, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(rows) == 0 {
		t.Fatalf("no rows in %s: %v", dir, err)
	}
	for _, f := range rows {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
			var row struct {
				Payload json.RawMessage `json:"payload"`
			}
			if err := json.Unmarshal(line, &row); err != nil || len(row.Payload) == 0 {
				t.Fatalf("%s row %d: %v", f, i+1, err)
			}
			name := filepath.Join(out, fmt.Sprintf("%s-%d.json", strings.TrimSuffix(filepath.Base(f), ".json"), i+1))
			phptest.WriteFile(t, name, string(row.Payload))
			files = append(files, name)
		}
	}
	return files
}

// decodeApp generates every job class of app, checks there are classes of
// them, and decodes files with the generated code.
func decodeApp(t *testing.T, app string, classes int, keys []key, files []string) map[string]decoded {
	t.Helper()
	a, err := phpclass.Reflect(context.Background(), phpclass.Options{AppDir: app, Classes: jobClasses(t, app)})
	if err != nil {
		t.Fatal(err)
	}
	g := generate(t, a)
	if len(g.classes) != classes {
		t.Fatalf("%d classes generated, want the fixture app's %d", len(g.classes), classes)
	}
	return g.decode(t, keys, files)
}

// dispatched runs `php artisan app:dispatch KIND` of the Laravel 8.83 test
// app for each kind on a fresh SQLite database and writes each job it
// queued, as the jobs table holds it, to KIND.json (KIND-N.json when a
// kind queued several).
func dispatched(t *testing.T, app string, kinds ...string) []string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "jobs.sqlite")
	phptest.WriteFile(t, db, "")
	env := append(os.Environ(), "DB_CONNECTION=sqlite", "DB_DATABASE="+db, "QUEUE_CONNECTION=database", "CACHE_DRIVER=database",
		"APP_KEY=base64:bGFyYXdvcmtlciBmaXh0dXJlIGtleSwgMzIgYnl0ZXM=")
	php := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "php", args...)
		cmd.Dir, cmd.Env = app, env
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("php %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
		return out
	}
	php("artisan", "migrate", "--force")
	out := t.TempDir()
	var files []string
	const readJobs = `$db = new PDO('sqlite:'.$argv[1]); foreach ($db->query('SELECT payload FROM jobs ORDER BY id') as $r) { echo base64_encode($r[0]), "\n"; } $db->exec('DELETE FROM jobs');`
	for _, kind := range kinds {
		php("artisan", "app:dispatch", kind)
		rows := strings.Fields(string(php("-r", readJobs, db)))
		if len(rows) == 0 {
			t.Fatalf("app:dispatch %s queued nothing", kind)
		}
		for i, row := range rows {
			raw, err := base64.StdEncoding.DecodeString(row)
			if err != nil {
				t.Fatal(err)
			}
			name := kind + ".json"
			if len(rows) > 1 {
				name = fmt.Sprintf("%s-%d.json", kind, i+1)
			}
			files = append(files, filepath.Join(out, name))
			phptest.WriteFile(t, files[len(files)-1], string(raw))
		}
	}
	return files
}

// TestGeneratedCodeDecodesModelCollections: gen's file for a class shaped
// like a real app's (Firefly III's DownloadExchangeRates: a property
// declared as a plain Collection holding User::all(), which
// SerializesModels queues as the users' class and keys; a date the
// constructor sets only when given one) decodes the jobs real `php
// artisan` queued for it on Laravel 8.83, with every other shape a
// declaration admits: plain collections (a list, keyed), an empty
// Eloquent collection, a nullable one holding null, an uninitialised
// property PHP left out, arrays of models and nested models (which travel
// whole), an enum, a null model; and a class without SerializesModels,
// whose models and collections travel whole.
func TestGeneratedCodeDecodesModelCollections(t *testing.T) {
	phptest.NeedPHP(t)
	if testing.Short() {
		t.Skip("builds a module (-short)")
	}
	app := phptest.CopyApp(t)
	files := dispatched(t, app, "exchange-rates", "exchange-rates-dated", "whole-models", "models", "enums-dates")
	a, err := phpclass.Reflect(context.Background(), phpclass.Options{AppDir: app, Classes: jobClasses(t, app)})
	if err != nil {
		t.Fatal(err)
	}
	src, err := jobgen.Generate(a, a.Class(`App\Jobs\Shapes\ExchangeRatesJob`), jobgen.Options{Package: "rates"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Users payload.Collection `php:\"users\"`", "Since *time.Time `php:\"since,optional\"`",
		"Maybe *payload.Collection `php:\"maybe,default=null\"`", "Nobody payload.ModelIdentifier `php:\"nobody\"`"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("ExchangeRatesJob's file lacks %s:\n%s", want, src)
		}
	}
	got := generate(t, a).decode(t, nil, files)
	checkDecoded(t, got, len(files), map[string]map[string]any{
		"exchange-rates.json": {
			"Users.models.Class": `App\Models\User`, "Users.models.ID": []any{2, 1}, "Users.models.Connection": "sqlite",
			"Totals.class": `Illuminate\Support\Collection`, "Totals.items": map[string]any{"EUR": 1.5, "USD": 2},
			"Tags.items": []any{"rates", "daily"}, "Nobody.Class": "", "Nobody.ID": []any{},
			"Maybe": nil, "Since": nil, "Status": "Active", "Podcast": nil,
		},
		"exchange-rates-dated.json": {"Since": "2026-03-04T00:00:00+01:00", "Users.models.ID": []any{2, 1}},
		"whole-models.json": {"Podcast.Class": `App\Models\Podcast`, "Users.class": `Illuminate\Database\Eloquent\Collection`,
			"Mixed.items.x": 7},
		"models.json": {"Podcast.ID": 42, "Users.ID": []any{1, 2}},
	})
}
