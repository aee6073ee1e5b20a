package payloadcmd_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console/internal/clitest"
	"github.com/laraworker/laraworker/laravel/payload"
)

// classFileFixtures declares the classes of the 10.50 and 12.67 fixture
// apps (testdata/laravel-*/app/Jobs, the same sources) as their PHP says:
// queue options, property types and visibility, declared defaults.
// Constructor-promoted properties (NoopJob's $record = true) have no
// declared default: PHP serializes them whatever they hold. DeadlineJob's
// and ExpiringJob's retryUntil() is a method: the file states what it
// returned at dispatch.
const classFileFixtures = `{
  "App\\Jobs\\NoopJob": {"properties": {"record": {"type": "bool"}}},
  "App\\Jobs\\AlwaysFails": {"properties": {"note": {"type": "string"}}},
  "App\\Jobs\\RetryJob": {"tries": 4, "backoff": [2, 5, 10], "timeout": 30, "maxExceptions": 3, "failOnTimeout": true,
    "properties": {"failUntil": {"type": "int"}}},
  "App\\Jobs\\SlowJob": {"timeout": 2, "failOnTimeout": true, "tries": 3, "properties": {"seconds": {"type": "int"}}},
  "App\\Jobs\\DeadlineJob": {"backoff": 3, "retryUntil": %DEADLINE%, "properties": {"label": {"type": "string"}}},
  "App\\Jobs\\ExpiringJob": {"backoff": 4, "retryUntil": %EXPIRING%, "properties": {"seconds": {"type": "int"}}},
  "App\\Jobs\\ScalarJob": {"properties": {
    "count": {"type": "int"}, "big": {"type": "int"}, "negative": {"type": "int"}, "ratio": {"type": "float"},
    "whole": {"type": "float"}, "title": {"type": "string"}, "url": {"type": "string"}, "empty": {"type": "string"},
    "flag": {"type": "bool"}, "nothing": {"type": "?string"}, "tags": {"type": "array"}, "meta": {"type": "array"},
    "untouchedDefault": {"type": "int", "default": 5}, "changedDefault": {"type": "int", "default": 5},
    "secretNote": {"visibility": "protected", "type": "string"},
    "privateCount": {"visibility": "private", "type": "int"}}}
}`

// scalarJobAllProps are every property ScalarJob's constructor set,
// untouchedDefault included (at its declared default, so 9.4+ leaves it
// out), and whole as an int (a float property makes it 2.0).
const scalarJobAllProps = `{"count":42,"big":9223372036854775807,"negative":-7,"ratio":0.1,"whole":2,
 "title":"Grüße \"quoted\" \\ back\tslash\nnewline ✓ 日本","url":"https://example.com/a/b?c=d","empty":"","flag":true,
 "nothing":null,"tags":["red","green"],"meta":{"nested":{"k":1,"10":"ten"},"list":[1.5,false,null]},
 "untouchedDefault":5,"changedDefault":6,"secretNote":"protected promoted","privateCount":3}`

// pushCase is one dispatch() of a fixture app that push must reproduce.
type pushCase struct {
	fixture string
	args    []string
}

// fixturePushCases are the dispatches of the fixture apps push can
// express: scalar properties, declared options, protected and private
// properties, defaults left out.
func fixturePushCases(props string) []pushCase {
	return []pushCase{
		{"noop.json", []string{`App\Jobs\NoopJob`, "--prop", "record=true"}},
		{"fails.json", []string{`App\Jobs\AlwaysFails`, "--prop", "note=fails ✗ 失敗"}},
		{"slow.json", []string{`App\Jobs\SlowJob`, "--prop", "seconds=5"}},
		{"retry.json", []string{`App\Jobs\RetryJob`, "--prop", "failUntil=0"}},
		// --tries at the class's declared $tries: PHP's object holds its
		// default, which 9.4+ leaves out of the command.
		{"retry.json", []string{`App\Jobs\RetryJob`, "--prop", "failUntil=0", "--tries", "4", "--backoff", "2,5,10"}},
		{"deadline.json", []string{`App\Jobs\DeadlineJob`, "--prop", "label=deadline"}},
		{"expiring.json", []string{`App\Jobs\ExpiringJob`, "--prop", "seconds=2"}},
		{"scalars.json", []string{`App\Jobs\ScalarJob`, "--props", props}},
	}
}

// fixtureClassFile writes classFileFixtures with the retryUntil values of
// the fixture set's DeadlineJob and ExpiringJob.
func fixtureClassFile(t *testing.T, dir string) string {
	t.Helper()
	content := classFileFixtures
	for marker, file := range map[string]string{"%DEADLINE%": "deadline.json", "%EXPIRING%": "expiring.json"} {
		p, err := payload.Parse(readFixture(t, dir, file))
		if err != nil {
			t.Fatal(err)
		}
		content = strings.ReplaceAll(content, marker, strconv.FormatInt(*p.RetryUntil, 10))
	}
	return clitest.Write(t, "classes.json", content)
}

func readFixture(t *testing.T, dir, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", dir, "payloads", name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestPushWritesWhatDispatchWrites: with the app's version, push writes
// the bytes a real dispatch() wrote, on 10.50 (8.x's keys, defaults left
// out of the command) and 12.67 (createdAt, delay, data.batchId).
func TestPushWritesWhatDispatchWrites(t *testing.T) {
	sets := []struct {
		dir, version string
		createdAt    string
	}{
		{"laravel-10.50", "10.50.3", ""},
		{"laravel-12.67", "12.67.0", "1796032508"},
	}
	clitest.ForEachEngine(t, func(t *testing.T, tg *clitest.Target) {
		props := clitest.Write(t, "scalars.json", scalarJobAllProps)
		for _, set := range sets {
			classes := fixtureClassFile(t, set.dir)
			for _, c := range fixturePushCases(props) {
				want := readFixture(t, set.dir, c.fixture)
				p, err := payload.Parse(want)
				if err != nil {
					t.Fatal(err)
				}
				args := append(c.args, "--class-file", classes, "--laravel-version", set.version, "--uuid", p.UUID)
				if set.createdAt != "" {
					args = append(args, "--created-at", set.createdAt)
				}
				job := tg.Pushed(t, args...)
				if !bytes.Equal(job.Payload, want) {
					t.Errorf("%s %v:\n got %s\nwant %s", set.version, c.args, job.Payload, want)
				}
			}
		}
	})
}

// TestPushReadsTheAppsVersion: without --laravel-version, push writes what
// the app's own version writes, read as work reads it (here from
// composer.lock, --php off); --laravel-version wins over it.
func TestPushReadsTheAppsVersion(t *testing.T) {
	tg := clitest.NewTarget(t, "sqlite")
	app := func(version string) []string {
		dir := t.TempDir()
		for name, content := range map[string]string{
			"artisan":       "#!/usr/bin/env php\n<?php\n",
			"composer.lock": `{"packages": [{"name": "laravel/framework", "version": "v` + version + `"}]}`,
			".env":          "APP_ENV=testing\n",
		} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return []string{"--app", dir, "--php", "off"}
	}
	noop := []string{`App\Jobs\NoopJob`, "--prop", "record=true"}
	cases := []struct {
		name  string
		args  []string
		want  []byte
		extra []string
	}{
		{"10.50 app", app("10.50.3"), readFixture(t, "laravel-10.50", "noop.json"), nil},
		{"12.67 app", app("12.67.0"), readFixture(t, "laravel-12.67", "noop.json"), []string{"--created-at", "1796032508"}},
	}
	for _, c := range cases {
		p, err := payload.Parse(c.want)
		if err != nil {
			t.Fatal(err)
		}
		args := append(append(append(append([]string{}, noop...), "--uuid", p.UUID), c.extra...), c.args...)
		job := tg.Pushed(t, args...)
		if !bytes.Equal(job.Payload, c.want) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, job.Payload, c.want)
		}
	}
	// --laravel-version 8.83 over a 12.67 app: 8.x's keys, every property.
	job := tg.Pushed(t, append(append([]string{}, noop...), append(app("12.67.0"), "--laravel-version", "8.83")...)...)
	p, err := payload.Parse(job.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if p.CreatedAt != nil || !strings.Contains(p.Data.Command, `s:10:"middleware";a:0:{}`) {
		t.Errorf("--laravel-version 8.83 on a 12.67 app: %s", job.Payload)
	}
	// A version that names no release is an error that says what to do.
	_, stderr, code := tg.Run(t, append(append([]string{"push"}, noop...), app("12.x-dev")...)...)
	if code != 1 || !strings.Contains(stderr, `"12.x-dev" names no release: pass --laravel-version`) {
		t.Errorf("12.x-dev: exit %d, %q", code, stderr)
	}
}

// TestPushShapeAliasAndHints: the removed --shape and --output still work
// for one release, with a hint on stderr; --json FILE (before --props)
// gets a hint too.
func TestPushShapeAliasAndHints(t *testing.T) {
	tg := clitest.NewTarget(t, "sqlite")
	out, stderr, code := tg.Run(t, "push", `App\Jobs\NoopJob`, "--shape", "12", "--output", "json")
	if code != 0 || !strings.Contains(stderr, "--shape is deprecated") || !strings.Contains(stderr, "--shape 12 is --laravel-version 12.11") ||
		!strings.Contains(stderr, "--output is deprecated") || !strings.HasPrefix(out, "{") {
		t.Fatalf("--shape 12 --output json: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	jobs := tg.Jobs(t)
	p, err := payload.Parse(jobs[len(jobs)-1].Payload)
	if err != nil {
		t.Fatal(err)
	}
	if p.CreatedAt == nil {
		t.Errorf("--shape 12 wrote no createdAt: %s", jobs[len(jobs)-1].Payload)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shape", "12", "--laravel-version", "12.67"}, "give only --laravel-version"},
		{[]string{"--shape", "11"}, "want 8, 12, 12.51 or 13"},
		{[]string{"--output", "yaml"}, "want text or json"},
		{[]string{"--json", "props.json"}, "the properties file is --props FILE"},
	} {
		_, stderr, code := tg.Run(t, append([]string{"push", `App\Jobs\NoopJob`}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, stderr, c.want)
		}
	}
}

// TestClassFileErrorsShowTheFormat: a class file that is not a JSON
// declaration (a PHP file, a typo) gets an error that shows the format.
func TestClassFileErrorsShowTheFormat(t *testing.T) {
	tg := clitest.NewTarget(t, "sqlite")
	php := clitest.Write(t, "RetryJob.php", "<?php\n\nnamespace App\\Jobs;\n\nclass RetryJob {}\n")
	broken := clitest.Write(t, "classes.json", `{"App\\Jobs\\RetryJob": {"tries": 4,}}`)
	other := clitest.Write(t, "other.json", `{"App\\Jobs\\Other": {}}`)
	badDefault := clitest.Write(t, "default.json", `{"App\\Jobs\\RetryJob": {"properties": {"failUntil": {"type": "int", "default": "0"}}}}`)
	for _, c := range []struct {
		file, want string
	}{
		{php, "this is PHP source; --class-file takes a JSON declaration of the class, not its PHP file"},
		{broken, "not a JSON class declaration"},
		{other, `has no entry for App\Jobs\RetryJob`},
		{badDefault, `default "0" is not of its type int`},
	} {
		_, stderr, code := tg.Run(t, "push", `App\Jobs\RetryJob`, "--prop", "failUntil=1", "--class-file", c.file)
		if code != 2 || !strings.Contains(stderr, c.want) || (c.file != badDefault && !strings.Contains(stderr, `{"App\\Jobs\\RetryJob": {"tries": 4`)) {
			t.Errorf("%s: exit %d, stderr %q", filepath.Base(c.file), code, stderr)
		}
	}
}

// TestPushShapeAtEveryVersion: for each Laravel version from 8 to 13 push
// writes the key set and command of that version: the 10.50 bytes for
// 9.4 to 12.10, 8.x's (every property) before 9.4, the 12.67 bytes from
// 12.51, without data.batchId before it, and 13's deleteWhenMissingModels
// key after retryUntil.
func TestPushShapeAtEveryVersion(t *testing.T) {
	tg := clitest.NewTarget(t, "sqlite")
	l1050 := readFixture(t, "laravel-10.50", "noop.json")
	l1267 := readFixture(t, "laravel-12.67", "noop.json")
	p1050, _ := payload.Parse(l1050)
	p1267, _ := payload.Parse(l1267)
	with1267UUID := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(p1267.UUID), []byte(p1050.UUID)) }
	before1251 := with1267UUID(bytes.Replace(l1267, []byte(`,"batchId":null}`), []byte(`}`), 1))
	v13 := with1267UUID(bytes.Replace(l1267, []byte(`"retryUntil":null,`), []byte(`"retryUntil":null,"deleteWhenMissingModels":false,`), 1))
	all8 := bytes.Replace(l1050, []byte(`O:16:\"App\\Jobs\\NoopJob\":1:{s:6:\"record\";b:1;}`),
		[]byte(`O:16:\"App\\Jobs\\NoopJob\":11:{s:6:\"record\";b:1;s:3:\"job\";N;s:10:\"connection\";N;s:5:\"queue\";N;`+
			`s:15:\"chainConnection\";N;s:10:\"chainQueue\";N;s:19:\"chainCatchCallbacks\";N;s:5:\"delay\";N;`+
			`s:11:\"afterCommit\";N;s:10:\"middleware\";a:0:{}s:7:\"chained\";a:0:{}}`), 1)
	if bytes.Equal(all8, l1050) || bytes.Equal(before1251, l1267) || bytes.Equal(v13, l1267) {
		t.Fatal("the expected payloads were not derived from the fixtures")
	}
	cases := []struct {
		version string
		want    []byte
	}{
		{"8.83", all8}, {"9.3", all8},
		{"9.4", l1050}, {"10.50.3", l1050}, {"11.0", l1050}, {"12.10", l1050},
		{"12.11", before1251}, {"12.50", before1251},
		{"12.51", with1267UUID(l1267)}, {"12.67.0", with1267UUID(l1267)},
		{"13.0", v13}, {"13.26", v13},
	}
	for _, c := range cases {
		job := tg.Pushed(t, `App\Jobs\NoopJob`, "--prop", "record=true", "--laravel-version", c.version,
			"--uuid", p1050.UUID, "--created-at", strconv.FormatInt(*p1267.CreatedAt, 10))
		if !bytes.Equal(job.Payload, c.want) {
			t.Errorf("--laravel-version %s:\n got %s\nwant %s", c.version, job.Payload, c.want)
		}
	}
}
