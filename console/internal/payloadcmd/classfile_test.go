package payloadcmd_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console/internal/clitest"
	"github.com/laraworker/laraworker/laravel/payload"
)

// classFile1267 declares the 12.67 fixture classes as their PHP sources
// (testdata/laravel-12.67/app/Jobs) do.
const classFile1267 = `{
  "App\\Jobs\\RetryJob": {"tries": 4, "backoff": [2, 5, 10], "timeout": 30, "maxExceptions": 3, "failOnTimeout": true,
    "properties": {"failUntil": {"type": "int"}}},
  "App\\Jobs\\ScalarJob": {"properties": {
    "count": {"type": "int"}, "big": {"type": "int"}, "negative": {"type": "int"}, "ratio": {"type": "float"},
    "whole": {"type": "float"}, "title": {"type": "string"}, "url": {"type": "string"}, "empty": {"type": "string"},
    "flag": {"type": "bool"}, "nothing": {"type": "?string"}, "tags": {"type": "array"}, "meta": {"type": "array"},
    "untouchedDefault": {"type": "int"}, "changedDefault": {"type": "int"},
    "secretNote": {"visibility": "protected", "type": "string"},
    "privateCount": {"visibility": "private", "type": "int"}}}
}`

// scalarJobProps are the values ScalarJob's constructor set when the
// fixture was dispatched (untouchedDefault left at its default, so 12.x
// omits it).
const scalarJobProps = `{"count":42,"big":9223372036854775807,"negative":-7,"ratio":0.1,"whole":2.0,
 "title":"Grüße \"quoted\" \\ back\tslash\nnewline ✓ 日本","url":"https://example.com/a/b?c=d","empty":"","flag":true,
 "nothing":null,"tags":["red","green"],"meta":{"nested":{"k":1,"10":"ten"},"list":[1.5,false,null]},
 "changedDefault":6,"secretNote":"protected promoted","privateCount":3}`

func fixture1267(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../../testdata/laravel-12.67/payloads/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestPushWithClassFileMatches1267: with the class file, push writes what
// a real 12.67 dispatch() wrote, byte for byte: RetryJob's declared queue
// options in the payload (not in the command, as 9.4+ omits defaults) and
// ScalarJob's protected and private properties under PHP's names.
func TestPushWithClassFileMatches1267(t *testing.T) {
	clitest.ForEachEngine(t, func(t *testing.T, tg *clitest.Target) {
		classes := clitest.Write(t, "classes.json", classFile1267)
		props := clitest.Write(t, "scalars.json", scalarJobProps)
		for _, c := range []struct {
			fixture string
			args    []string
		}{
			{"retry.json", []string{`App\Jobs\RetryJob`, "--prop", "failUntil=0"}},
			{"scalars.json", []string{`App\Jobs\ScalarJob`, "--props", props}},
		} {
			want := fixture1267(t, c.fixture)
			p, err := payload.Parse(want)
			if err != nil {
				t.Fatal(err)
			}
			job := tg.Pushed(t, append(c.args, "--class-file", classes, "--laravel-version", "12.67",
				"--uuid", p.UUID, "--created-at", "1796032508")...)
			if !bytes.Equal(job.Payload, want) {
				t.Errorf("%s:\n got %s\nwant %s", c.args[0], job.Payload, want)
			}
		}
	})
}

// TestPushWithClassFileOn8: 8.x serializes every property, so the
// declared options are in the command too, and flags still win.
func TestPushWithClassFileOn8(t *testing.T) {
	clitest.ForEachEngine(t, func(t *testing.T, tg *clitest.Target) {
		classes := clitest.Write(t, "classes.json", classFile1267)
		job := tg.Pushed(t, `App\Jobs\RetryJob`, "--class-file", classes, "--prop", "failUntil=1", "--tries", "6")
		p, err := payload.Parse(job.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if *p.MaxTries != 6 || *p.MaxExceptions != 3 || !p.FailOnTimeout || *p.Backoff != "2,5,10" || *p.Timeout != 30 {
			t.Errorf("payload keys: %s", job.Payload)
		}
		cmd, err := payload.DecodeCommand(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]int64{"tries": 6, "maxExceptions": 3, "timeout": 30} {
			v, err := cmd.Object.Prop(name)
			if err != nil || v.Int != want {
				t.Errorf("command property %s = %v (%v), want %d", name, v, err, want)
			}
		}
	})
}

func TestPushRefusesWhatPHPCannotHold(t *testing.T) {
	tg := clitest.NewTarget(t, "sqlite")
	classes := clitest.Write(t, "classes.json", classFile1267)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{`App\Jobs\ScalarJob`, "--prop", `count="7"`}, `App\Jobs\ScalarJob::$count is int, got a PHP string`},
		{[]string{`App\Jobs\ScalarJob`, "--prop", "title=null"}, `App\Jobs\ScalarJob::$title is string: null is not allowed`},
		{[]string{`App\Jobs\ScalarJob`, "--prop", "cuont=7"}, `declares no property "cuont"`},
		{[]string{`App\Jobs\Unknown`, "--prop", "x=1"}, `has no entry for App\Jobs\Unknown`},
		{[]string{`App\Jobs\ScalarJob`, "--prop", "my-prop=1"}, `"my-prop" is not a PHP property name`},
		{[]string{`App\Jobs\ScalarJob`, "--prop", "\x00*\x00secretNote=x"}, `declare their visibility in a --class-file`},
	}
	for _, c := range cases {
		_, stderr, code := tg.Run(t, append(append([]string{"push"}, c.args...), "--class-file", classes)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want it to say %q", c.args, code, stderr, c.want)
		}
	}
	if n := len(tg.Jobs(t)); n != 0 {
		t.Errorf("%d jobs pushed by refused commands", n)
	}
	bad := clitest.Write(t, "bad.json", `{"App\\Jobs\\X": {"tries": 1, "retries": 2}}`)
	if _, stderr, code := tg.Run(t, "push", `App\Jobs\X`, "--class-file", bad); code == 0 || !strings.Contains(stderr, `unknown field "retries"`) {
		t.Errorf("an unknown class-file key: exit %d, %q", code, stderr)
	}
}

// TestClassFileAsPHPWritesIt: a class file made with PHP's json_encode
// (an empty properties array is [], an app without entries is []) is read
// as one written by hand.
func TestClassFileAsPHPWritesIt(t *testing.T) {
	tg := clitest.NewTarget(t, "sqlite")
	classes := clitest.Write(t, "classes.json", `{"App\\Jobs\\NoopJob":{"tries":2,"encrypted":false,"properties":[]}}`)
	job := tg.Pushed(t, `App\Jobs\NoopJob`, "--class-file", classes)
	if !strings.Contains(string(job.Payload), `"maxTries":2,`) {
		t.Errorf("payload %s, want the class file's maxTries 2", job.Payload)
	}
	empty := clitest.Write(t, "empty.json", `[]`)
	if _, stderr, code := tg.Run(t, "push", `App\Jobs\NoopJob`, "--class-file", empty, "--prop", "x=1"); code == 0 || !strings.Contains(stderr, `has no entry for App\Jobs\NoopJob`) {
		t.Errorf("an empty class file: exit %d, %q", code, stderr)
	}
}
