package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisHostileKind is one kind of bad entry in a Redis list and the words
// its failed_jobs exception must contain. make gets a fresh uuid, so that
// every entry is unique.
type redisHostileKind struct {
	name  string
	cause []string
	make  func(uuid string) string
}

// times is how often the entry is pushed in a row, byte for byte: twice
// for the kinds named "..., pushed twice", whose copies must each fail on
// their own; once for the others.
func (k redisHostileKind) times() int {
	if strings.HasSuffix(k.name, ", pushed twice") {
		return 2
	}
	return 1
}

// noopJSON is a NoopJob payload as RedisQueue pushes it, with fields
// replaced (a nil value drops the key). Keys keep PHP's order.
func noopJSON(uuid string, replace map[string]any) string {
	keys := []string{"uuid", "displayName", "job", "maxTries", "maxExceptions", "failOnTimeout", "backoff", "timeout", "retryUntil", "data", "id", "attempts"}
	values := map[string]any{
		"uuid": uuid, "displayName": noopClass, "job": `Illuminate\Queue\CallQueuedHandler@call`,
		"maxTries": nil, "maxExceptions": nil, "failOnTimeout": false, "backoff": nil, "timeout": nil, "retryUntil": nil,
		"data":     map[string]any{"commandName": noopClass, "command": `O:16:"App\Jobs\NoopJob":0:{}`},
		"id":       strings.ReplaceAll(uuid, "-", ""),
		"attempts": 0,
	}
	var b strings.Builder
	b.WriteString("{")
	first := true
	for _, k := range keys {
		v := values[k]
		if r, ok := replace[k]; ok {
			if r == nil {
				continue
			}
			v = r
		}
		if !first {
			b.WriteString(",")
		}
		first = false
		kb, _ := json.Marshal(k)
		var vb []byte
		if raw, ok := v.(json.RawMessage); ok {
			vb = raw
		} else {
			vb, _ = json.Marshal(v)
		}
		b.Write(kb)
		b.WriteString(":")
		b.Write(vb)
	}
	b.WriteString("}")
	return b.String()
}

var (
	unreadable = "Laravel's pop cannot read this payload"
	badCommand = "cannot decode the command"
)

var redisHostileKinds = []redisHostileKind{
	{"not JSON", []string{unreadable, "Expected value but found invalid token"}, func(u string) string { return "garbage " + u }},
	{"truncated JSON", []string{unreadable}, func(u string) string { s := noopJSON(u, nil); return s[:len(s)-30] }},
	{"a JSON array", []string{unreadable}, func(u string) string { return `["` + u + `",0]` }},
	{"a JSON string", []string{unreadable}, func(u string) string { return `"` + u + `"` }},
	{"no attempts", []string{unreadable}, func(u string) string { return noopJSON(u, map[string]any{"attempts": nil}) }},
	{"attempts not a number", []string{unreadable}, func(u string) string { return noopJSON(u, map[string]any{"attempts": "many"}) }},
	{"attempts null", []string{unreadable}, func(u string) string {
		return noopJSON(u, map[string]any{"attempts": json.RawMessage("null")})
	}},
	{"attempts 1e400", []string{unreadable}, func(u string) string {
		return noopJSON(u, map[string]any{"attempts": json.RawMessage("1e400")})
	}},
	{"JSON nested 2,000 deep", []string{unreadable}, func(u string) string {
		return noopJSON(u, map[string]any{"backoff": json.RawMessage(strings.Repeat("[", 2000) + strings.Repeat("]", 2000))})
	}},
	{"truncated command", []string{badCommand, "php unserialize"}, func(u string) string {
		return noopJSON(u, map[string]any{"data": map[string]any{"commandName": noopClass, "command": `O:16:"App\Jobs\NoopJob":1:{s:1:"x";s:5:"ab`}})
	}},
	{"uuid a number", []string{`key "uuid": want a string`}, func(u string) string {
		return noopJSON(u, map[string]any{"uuid": json.RawMessage("12345"), "id": strings.ReplaceAll(u, "-", "")})
	}},
	{"maxTries a string", []string{`key "maxTries": want an integer`}, func(u string) string { return noopJSON(u, map[string]any{"maxTries": "three"}) }},
	{"timeout an array", []string{`key "timeout": want an integer`}, func(u string) string { return noopJSON(u, map[string]any{"timeout": []int{1, 2}}) }},
	{"not JSON, pushed twice", []string{unreadable}, func(u string) string { return "twice " + u }},
	{"truncated command, pushed twice", []string{badCommand}, func(u string) string {
		return noopJSON(u, map[string]any{"data": map[string]any{"commandName": noopClass, "command": `O:16:"App\Jobs\NoopJob":1:{s:1:"x";i:`}})
	}},
}

// Rare, big kinds: a few of each in a batch.
var redisBigKinds = []redisHostileKind{
	{"4 MB command, truncated", []string{badCommand}, func(u string) string {
		s := `O:16:"App\Jobs\NoopJob":1:{s:4:"blob";s:4194304:"` + strings.Repeat("x", 4<<20-40)
		return noopJSON(u, map[string]any{"data": map[string]any{"commandName": noopClass, "command": s}})
	}},
	{"4 MB of garbage", []string{unreadable}, func(u string) string { return u + strings.Repeat("{", 4<<20) }},
}

// TestRedisHostileEntries pushes 1,000 bad entries onto a Redis queue a
// running `laraworker work --concurrency 4` serves, twice: not JSON,
// truncated JSON, arrays and strings, no or non-numeric attempts, JSON
// nested deeper than Redis's cjson decodes, wrong types, broken commands,
// 4 MB entries, and entries pushed twice byte for byte (which would share
// one reservation). Laravel's own pop loses the entries it cannot decode
// (its script raises after the LPOP), so no PHP worker serves the queue.
// Every entry must end in failed_jobs as often as it was pushed, with the
// list's bytes as its payload and a message naming the cause, and nothing
// may be left in Redis (an entry popped again and again would fail more
// often, or never leave); the worker must keep running jobs and its
// memory must not grow from one batch to the next.
func TestRedisHostileEntries(t *testing.T) {
	const queue = "hostile"
	r := needRedisApp(t, 60)
	template := r.noopTemplate(t, queue)
	w := r.goWorker(t, nil, "--queue", queue, "--concurrency", "4", "--sleep", "0.1", "--memory", "0", "--tries", "3")
	good := func(n int) {
		t.Helper()
		uuids := r.pushCopies(t, template, queue, n)
		waitFor(t, time.Minute, "good jobs to run", func() bool {
			ran := 0
			for _, run := range runsOf(t, noopClass) {
				if uuids[run.UUID] {
					ran++
				}
			}
			return ran == n
		})
	}
	good(20)
	rssStart := rssKB(t, w.pid())

	const batch = 1000
	kindOf := map[string]redisHostileKind{}
	// Pushed as anything else than laraworker or Laravel would push them
	// (internal/redisproto refuses a payload Laravel's pop cannot count): RPUSH
	// and a notify token each, as Laravel's push script does.
	k := r.cfg.Keys(queue)
	pushBatch := func() int {
		var items []string
		add := func(kind redisHostileKind) {
			raw := kind.make(newUUID())
			kindOf[raw] = kind
			for range kind.times() {
				items = append(items, raw)
			}
		}
		for _, k := range redisBigKinds {
			for range 3 {
				add(k)
			}
		}
		for i := 0; len(items) < batch; i++ {
			if kind := redisHostileKinds[i%len(redisHostileKinds)]; len(items)+kind.times() <= batch {
				add(kind)
			}
		}
		for i := 0; i < len(items); i += 50 {
			_, err := r.rc.Pipelined(context.Background(), func(p redis.Pipeliner) error {
				for _, raw := range items[i:min(i+50, len(items))] {
					p.RPush(context.Background(), k.Ready, raw)
					p.RPush(context.Background(), k.Notify, 1)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		return len(items)
	}

	var peaks, rss []int64
	total := 0
	for round := 1; round <= 2; round++ {
		start := time.Now()
		stopSampling := sampleRSS(t, w.pid())
		pushed := pushBatch()
		total += pushed
		if !waitUntil(3*time.Minute, func() bool {
			return count(t, app.q.DB(), "select count(*) from failed_jobs") >= total && r.left(t, queue) == 0
		}) {
			head, _ := r.rc.LRange(context.Background(), k.Ready, 0, 2).Result()
			for i := range head {
				head[i] = fmt.Sprintf("%.200s", head[i])
			}
			checkRedisHostileFailures(t, failedRows(t, app.q.DB(), "failed_jobs"), kindOf)
			t.Fatalf("round %d: %d failed_jobs rows for %d entries; in Redis: %d ready, %d reserved; head %q; worker log:\n%s",
				round, count(t, app.q.DB(), "select count(*) from failed_jobs"), total, r.ready(t, queue), len(r.rawReserved(t, queue)), head, tail(w.out.String()))
		}
		if w.exited() {
			t.Fatalf("the worker exited on hostile input: %v\n%s", w.err, tail(w.out.String()))
		}
		good(10)
		peaks = append(peaks, stopSampling())
		rss = append(rss, rssKB(t, w.pid()))
		t.Logf("round %d: %d hostile entries failed in %s; worker RSS peak %d kB, after %d kB",
			round, pushed, time.Since(start).Round(time.Millisecond), peaks[len(peaks)-1], rss[len(rss)-1])
	}
	w.stop(t, 30*time.Second)
	if n := count(t, app.q.DB(), "select count(*) from failed_jobs"); n != total {
		t.Errorf("%d failed_jobs rows for %d hostile entries", n, total)
	}
	checkRedisHostileFailures(t, failedRows(t, app.q.DB(), "failed_jobs"), kindOf)
	if lost := lostUUIDs(w.out.String()); len(lost) != 0 {
		t.Errorf("%d outcomes dropped as reservation lost: %v", len(lost), lost)
	}
	t.Logf("RSS: start %d kB; peak %d kB in batch 1, %d kB in batch 2", rssStart, peaks[0], peaks[1])
	if peaks[0] > rssCeilingKB || peaks[1] > rssCeilingKB || peaks[1] > peaks[0]*3/2+32<<10 {
		t.Errorf("worker RSS peaked at %d kB then %d kB (ceiling %d kB, start %d kB)", peaks[0], peaks[1], rssCeilingKB, rssStart)
	}
}

func checkRedisHostileFailures(t *testing.T, rows []failed, kindOf map[string]redisHostileKind) {
	t.Helper()
	perKind := map[string]int{}
	sample := map[string]string{}
	seen := map[string]int{}
	for _, f := range rows {
		k, ok := kindOf[f.Payload]
		if !ok {
			t.Errorf("failed_jobs row %s does not hold an entry's bytes (%.100s)", f.UUID, f.Payload)
			continue
		}
		seen[f.Payload]++
		if seen[f.Payload] > k.times() {
			t.Errorf("%s: failed more often than pushed (%.100s)", k.name, f.Payload)
		}
		perKind[k.name]++
		sample[k.name], _, _ = strings.Cut(f.Exception, "\n")
		if f.UUID == "" {
			t.Errorf("%s: failed_jobs row without uuid", k.name)
		}
		if f.Queue != "hostile" {
			t.Errorf("%s: failed_jobs row on queue %q", k.name, f.Queue)
		}
		for _, c := range k.cause {
			if !strings.Contains(f.Exception, c) {
				t.Errorf("%s: exception does not say %q:\n%.500s", k.name, c, f.Exception)
				break
			}
		}
	}
	for raw, k := range kindOf {
		if seen[raw] < k.times() {
			t.Errorf("%s: pushed %d times, failed %d times (%.100s)", k.name, k.times(), seen[raw], raw)
		}
	}
	var parts []string
	for _, k := range append(append([]redisHostileKind{}, redisHostileKinds...), redisBigKinds...) {
		parts = append(parts, fmt.Sprintf("%s %d", k.name, perKind[k.name]))
		t.Logf("%s: %.300s", k.name, sample[k.name])
		if perKind[k.name] == 0 {
			t.Errorf("no failed_jobs row for %s", k.name)
		}
	}
	t.Logf("failed per kind: %s", strings.Join(parts, ", "))
}
