package redisproto

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

const phpOnly = `App\Jobs\PhpOnly`

// foreignFor is payloadFor's job of a class the pops below do not take.
func foreignFor(uuid, id string) []byte {
	return []byte(strings.ReplaceAll(string(payloadFor(uuid, id, 0, "")), `NoopJob`, `PhpOnly`))
}

var goOnly = PopOptions{Only: []string{`App\Jobs\NoopJob`}}

// only is goOnly with max jobs and lookahead bounds, reporting the jobs
// looked past.
func only(max, jobs int, bytes int64) PopOptions {
	o := goOnly
	o.Max, o.Lookahead, o.LookaheadBytes, o.ReportLooked = max, jobs, bytes, true
	return o
}

// TestLookaheadTakesTheJobsBehindAForeignHead: a job of another class at
// the head no longer holds back the jobs behind it: one pop takes every
// job it serves from behind it, in order, each reserved as Laravel's pop
// reserves a head (member, score, one notify token), and the jobs it
// left stay in place, in their order, untouched.
func TestLookaheadTakesTheJobsBehindAForeignHead(t *testing.T) {
	srv := server(t)
	c := newClock()
	cfg := testConfig(srv.Addr, "la_")
	q := openQueue(t, cfg, c)
	ctx := ctxT(t)
	rc := srv.Client(t)
	k := cfg.Keys("")
	var left []string
	push := func(p []byte, php bool) {
		t.Helper()
		if _, err := q.Push(ctx, "", p); err != nil {
			t.Fatal(err)
		}
		if php {
			left = append(left, string(p))
		}
	}
	push(foreignFor("php-head", "ph"), true)
	for i := range 300 {
		push(payloadFor(fmt.Sprintf("go-%03d", i), fmt.Sprintf("g%d", i), i%3, ""), false)
		if i%100 == 50 {
			push(foreignFor(fmt.Sprintf("php-%d", i), fmt.Sprintf("p%d", i)), true)
		}
	}
	res, err := q.Pop(ctx, "", only(1000, 0, 0))
	if err != nil || len(res.Jobs) != 300 {
		t.Fatalf("pop: %d jobs, %v; want the 300 behind the foreign head", len(res.Jobs), err)
	}
	if res.Head == nil || res.Head.UUID != "php-head" || res.Head.DisplayName != phpOnly || res.LookaheadCut {
		t.Fatalf("head %+v cut %t", res.Head, res.LookaheadCut)
	}
	if len(res.Looked) != 3 || res.LookedPast != 3 || res.Looked[0].UUID != "php-50" || res.Looked[0].DisplayName != phpOnly || res.Looked[0].ByID || res.Looked[0].Copy {
		t.Fatalf("looked past %d: %+v, want the three PhpOnly jobs behind the head", res.LookedPast, res.Looked)
	}
	// Without ReportLooked a pop counts them only.
	res, err = q.Pop(ctx, "", PopOptions{Max: 5, Only: goOnly.Only})
	if err != nil || len(res.Jobs) != 0 || res.LookedPast != 3 || len(res.Looked) != 0 || res.Head == nil {
		t.Fatalf("a pop without the report: %d jobs, looked past %d (%d listed), head %+v, %v", len(res.Jobs), res.LookedPast, len(res.Looked), res.Head, err)
	}
	until := c.at(cfg.RetryAfter)
	for i, j := range res.Jobs {
		if j.UUID != fmt.Sprintf("go-%03d", i) || j.Attempts != i%3+1 || j.Err != nil {
			t.Fatalf("job %d: %+v", i, j)
		}
		score, err := rc.ZScore(ctx, k.Reserved, j.Reserved).Result()
		if err != nil || int64(score) != until {
			t.Fatalf("job %d reserved at %v (%v), want %d", i, score, err, until)
		}
		if !jsonEqual(t, strings.Replace(string(j.Payload), fmt.Sprintf(`"attempts":%d`, i%3), fmt.Sprintf(`"attempts":%d`, i%3+1), 1), j.Reserved) {
			t.Fatalf("job %d reserved as %s", i, j.Reserved)
		}
	}
	if got, _ := rc.LRange(ctx, k.Ready, 0, -1).Result(); strings.Join(got, "\n") != strings.Join(left, "\n") {
		t.Fatalf("list after the pop:\n%s\nwant the foreign jobs in order:\n%s", strings.Join(got, "\n"), strings.Join(left, "\n"))
	}
	if n, _ := rc.LLen(ctx, k.Notify).Result(); n != int64(len(left)) {
		t.Fatalf("%d notify tokens, want one per job left (%d)", n, len(left))
	}
	if n, _ := rc.ZCard(ctx, k.Reserved).Result(); n != 300 {
		t.Fatalf("%d reserved", n)
	}
}

// TestLookaheadTakesAsLaravelsPop is differential: taking jobs from
// behind jobs of other classes leaves Redis exactly as Laravel's own pop
// (the installed Laravel's RedisQueue) leaves it when those jobs are at
// the head: the same jobs with the same reserved members, scores, list
// and notify tokens, for random payloads with the shapes cjson rewrites,
// the displayName before or after the data, and copies of jobs left.
func TestLookaheadTakesAsLaravelsPop(t *testing.T) {
	srv := server(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("REDISQUEUE_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (REDISQUEUE_SEED to replay)", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	php := startPHPQueue(t, srv, "php_", 30, -1)
	c := newClock()
	cfg := testConfig(srv.Addr, "go_")
	cfg.RetryAfter = 30 * time.Second
	goQ := openQueue(t, cfg, c)
	rc := srv.Client(t)
	ctx := ctxT(t)
	phpCmd := func(op string, kv ...any) json.RawMessage {
		cmd := map[string]any{"op": op, "queue": "default", "now": c.unix.Load()}
		for i := 0; i+1 < len(kv); i += 2 {
			cmd[kv[i].(string)] = kv[i+1]
		}
		return php.call(t, cmd)
	}
	opts := PopOptions{Only: []string{`App\Jobs\Job1`, `app\jobs\job2`}}
	for round := range 20 {
		var all, ours, theirs [][]byte
		for i := range 2 + rng.IntN(30) {
			p := randomPayload(rng, round*100+i)
			if i == 0 || rng.IntN(3) == 0 {
				p = []byte(strings.Replace(string(p), `"displayName":"App\\Jobs\\Job1"`, `"displayName":"App\\Jobs\\Job0"`, 1))
				p = []byte(strings.Replace(string(p), `"displayName":"App\\Jobs\\Job2"`, `"displayName":"App\\Jobs\\Job0"`, 1))
			}
			if rng.IntN(4) == 0 {
				p = displayNameLast(t, p)
			}
			if len(all) > 0 && rng.IntN(8) == 0 {
				// A copy of a job of theirs. (A copy of one of ours Go
				// leaves while the first is reserved, where Laravel's pop
				// takes both.)
				if c := all[rng.IntN(len(all))]; strings.Contains(string(c), `Job0"`) {
					p = c
				}
			}
			all = append(all, p)
		}
		for _, p := range all {
			if strings.Contains(string(p), `Job0"`) {
				theirs = append(theirs, p)
			} else {
				ours = append(ours, p)
			}
		}
		for _, p := range all {
			if _, err := goQ.Push(ctx, "", p); err != nil {
				t.Fatal(err)
			}
		}
		// Laravel's queue holds our jobs first: its pop takes them from the head.
		for _, p := range append(append([][]byte{}, ours...), theirs...) {
			phpCmd("push", "payload", string(p))
		}
		opts.Max = len(all)
		res, err := goQ.Pop(ctx, "", opts)
		if err != nil {
			t.Fatal(err)
		}
		var phpJobs []phpPopped
		for range res.Jobs {
			var p *phpPopped
			if err := json.Unmarshal(phpCmd("pop"), &p); err != nil || p == nil {
				t.Fatalf("PHP pop: %v %v", p, err)
			}
			phpJobs = append(phpJobs, *p)
		}
		for i, j := range res.Jobs {
			p := phpJobs[i]
			if string(j.Payload) != p.Raw || j.Reserved != p.Reserved || j.Attempts != p.Attempts {
				t.Fatalf("round %d job %d popped differently:\n go: %s | %s | %d\nphp: %s | %s | %d", round, i, j.Payload, j.Reserved, j.Attempts, p.Raw, p.Reserved, p.Attempts)
			}
		}
		g, p := dump(t, rc, "go_"), dump(t, rc, "php_")
		if g != p {
			t.Fatalf("round %d: after Go's pop of %d jobs (of %d ours, %d theirs) the states differ:\n go:\n%s\nphp:\n%s", round, len(res.Jobs), len(ours), len(theirs), g, p)
		}
		if copies := len(ours) - len(res.Jobs); copies > 0 {
			t.Logf("round %d: %d copies of reserved jobs left in place", round, copies)
		}
		if _, err := goQ.Clear(ctx, ""); err != nil {
			t.Fatal(err)
		}
		phpCmd("clear")
	}
}

// displayNameLast moves a payload's displayName after its data, where
// Redis's cjson may write it when it re-encodes a payload.
func displayNameLast(t *testing.T, p []byte) []byte {
	t.Helper()
	s := string(p)
	start := strings.Index(s, `,"displayName":"`)
	end := start + strings.Index(s[start+1:], `",`) + 2
	name := s[start:end]
	s = s[:start] + s[end:]
	return []byte(strings.Replace(s, `,"id":`, name+`,"id":`, 1))
}

// TestLookaheadJudgesByBytes: behind a foreign head, a job is judged by
// its bytes and, when they say it may be taken, by its decoded payload:
// a job with no displayName, or whose only Go class name is in a nested
// object, is left; a job that is no JSON object is taken as unreadable
// (PHP's pop would lose it); a byte-for-byte copy of a job the pop takes
// is left as a copy, exactly one of the two removed; class names match
// ignoring ASCII case; with Except, a job with no displayName is taken.
func TestLookaheadJudgesByBytes(t *testing.T) {
	srv := server(t)
	cfg := testConfig(srv.Addr, "lj_")
	q := openQueue(t, cfg, newClock())
	ctx := ctxT(t)
	rc := srv.Client(t)
	k := cfg.Keys("")
	mine := payloadFor("mine", "m", 0, "")
	noName := `{"uuid":"no-name","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{},"id":"nn","attempts":0}`
	nested := `{"uuid":"nested","meta":{"displayName":"App\\Jobs\\NoopJob"},"displayName":"App\\Jobs\\PhpOnly","id":"n","attempts":0}`
	list := []string{string(foreignFor("head", "h")), noName, "not json", nested, `[1,2]`, string(mine), string(mine)}
	for _, p := range list {
		rc.RPush(ctx, k.Ready, p)
		rc.RPush(ctx, k.Notify, 1)
	}
	res, err := q.Pop(ctx, "", PopOptions{Max: 10, Only: []string{`APP\JOBS\noopjob`}, ReportLooked: true})
	if err != nil || len(res.Jobs) != 3 {
		t.Fatalf("pop: %d jobs, %v", len(res.Jobs), err)
	}
	var m *MalformedError
	if !errors.As(res.Jobs[0].Err, &m) || string(res.Jobs[0].Payload) != "not json" ||
		!errors.As(res.Jobs[1].Err, &m) || string(res.Jobs[1].Payload) != "[1,2]" ||
		res.Jobs[2].Err != nil || res.Jobs[2].UUID != "mine" {
		t.Fatalf("taken: %+v %+v %+v", res.Jobs[0], res.Jobs[1], res.Jobs[2])
	}
	want := []Head{{UUID: "no-name"}, {DisplayName: phpOnly, UUID: "nested"}, {DisplayName: `App\Jobs\NoopJob`, UUID: "mine", Copy: true}}
	if fmt.Sprint(res.Looked) != fmt.Sprint(want) {
		t.Fatalf("looked past %+v, want %+v", res.Looked, want)
	}
	got, _ := rc.LRange(ctx, k.Ready, 0, -1).Result()
	if strings.Join(got, "\n") != strings.Join([]string{list[0], noName, nested, string(mine)}, "\n") {
		t.Fatalf("list after the pop:\n%s", strings.Join(got, "\n"))
	}
	if n, _ := rc.LLen(ctx, k.Notify).Result(); n != 4 {
		t.Fatalf("%d notify tokens, want 4", n)
	}
	res, err = q.Pop(ctx, "", PopOptions{Max: 10, Except: []string{phpOnly}})
	if err != nil || len(res.Jobs) != 1 || res.Jobs[0].UUID != "no-name" {
		t.Fatalf("pop except PhpOnly: %+v %v", res, err)
	}
}

// TestLookaheadIsBounded: the lookahead stops after Lookahead jobs, or
// once it has read LookaheadBytes, and says so (LookaheadCut); the jobs
// beyond are taken by a pop that may look further, and a negative
// Lookahead stops at the head as before.
func TestLookaheadIsBounded(t *testing.T) {
	srv := server(t)
	cfg := testConfig(srv.Addr, "lb_")
	q := openQueue(t, cfg, newClock())
	ctx := ctxT(t)
	for i := range 5 {
		if _, err := q.Push(ctx, "", foreignFor(fmt.Sprint("php-", i), fmt.Sprint("p", i))); err != nil {
			t.Fatal(err)
		}
	}
	big := foreignFor("big", "b")
	big = []byte(strings.Replace(string(big), `"data":{`, `"pad":"`+strings.Repeat("x", 2<<20)+`","data":{`, 1))
	for _, p := range [][]byte{big, payloadFor("mine", "m", 0, "")} {
		if _, err := q.Push(ctx, "", p); err != nil {
			t.Fatal(err)
		}
	}
	before := dump(t, srv.Client(t), "lb_")
	for _, o := range []PopOptions{only(5, 4, 0), only(5, 0, 1<<20), only(5, -1, 0)} {
		res, err := q.Pop(ctx, "", o)
		if err != nil || len(res.Jobs) != 0 || res.Head == nil {
			t.Fatalf("pop %+v: %+v %v", o, res, err)
		}
		if o.Lookahead >= 0 && !res.LookaheadCut {
			t.Fatalf("pop %+v: looked past %d jobs, not cut", o, len(res.Looked))
		}
		if o.Lookahead < 0 && (len(res.Looked) != 0 || res.LookaheadCut) {
			t.Fatalf("pop with no lookahead looked past %d jobs", len(res.Looked))
		}
	}
	if after := dump(t, srv.Client(t), "lb_"); after != before {
		t.Fatal("a pop that took nothing changed Redis")
	}
	res, err := q.Pop(ctx, "", only(5, 0, 0))
	if err != nil || len(res.Jobs) != 1 || res.Jobs[0].UUID != "mine" || len(res.Looked) != 5 || res.LookaheadCut {
		t.Fatalf("pop with the default lookahead: %d jobs, %d looked past, cut %t, %v", len(res.Jobs), len(res.Looked), res.LookaheadCut, err)
	}
}
