package worker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/cache/dbcache"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/worker/internal/configproblem"
)

// debouncedClass is the 13.26 fixtures' #[DebounceFor(3)] class.
const debouncedClass = `App\Jobs\X13\Debounced`

// debouncedRows are the three jobs rows a real Laravel 13.26 app wrote
// for three dispatches of Debounced (n = 1, 2, 3; fixtures
// laravel-13.26/features/debounced.json), and the key #[DebounceFor] left
// in its cache (debounce-cache-keys.txt, without the app's prefix).
func debouncedRows(t *testing.T) (payloads [][]byte, key string) {
	t.Helper()
	dir := filepath.Join("..", "testdata", "laravel-13.26", "features")
	raw, err := os.ReadFile(filepath.Join(dir, "debounced.json"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row struct {
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		payloads = append(payloads, row.Payload)
	}
	keys, err := os.ReadFile(filepath.Join(dir, "debounce-cache-keys.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, key, ok := strings.Cut(strings.TrimSpace(string(keys)), "laravel_debounced_job:")
	if len(payloads) != 3 || !ok {
		t.Fatalf("fixtures: %d rows, key %q", len(payloads), keys)
	}
	return payloads, "laravel_debounced_job:" + key
}

// ownerOf is the debounceOwner a payload's command carries.
func ownerOf(t *testing.T, raw []byte) string {
	t.Helper()
	p, err := payload.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := payload.DecodeCommand(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	owner := debounceOwner(cmd)
	if len(owner) != 40 {
		t.Fatalf("debounceOwner %q", owner)
	}
	return owner
}

// ranN records the property n of each job run.
type ranN struct {
	mu sync.Mutex
	ns []int64
}

func (r *ranN) handler(_ context.Context, job *handlers.Job) error {
	cmd, err := job.Command()
	if err != nil {
		return err
	}
	v, err := cmd.Object.Prop("n")
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.ns = append(r.ns, v.Int)
	r.mu.Unlock()
	return nil
}

func (r *ranN) got() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.ns)
	slices.Sort(out)
	return out
}

// serializedString is PHP's serialize() of a string, as the database
// cache store keeps a value.
func serializedString(s string) []byte {
	b, err := phpserialize.Serialize(phpserialize.String(s))
	if err != nil {
		panic(err)
	}
	return b
}

// TestDebounceRunsOnlyTheLastDispatch: the three rows of three dispatches
// of a #[DebounceFor] class, with the key holding the last dispatch's
// owner (last writer wins): Go runs only n=3 and deletes the other two
// without running them or failing them, leaving the key to its TTL. With
// the key gone (expired), every job runs, as Laravel fails open.
func TestDebounceRunsOnlyTheLastDispatch(t *testing.T) {
	payloads, key := debouncedRows(t)
	for _, c := range []struct {
		name   string
		owner  []byte // the key's value; nil: no key
		want   []int64
		delete int
	}{
		{"superseded", serializedString(ownerOf(t, payloads[2])), []int64{3}, 2},
		{"key expired", nil, []int64{1, 2, 3}, 0},
		{"a newer dispatch not yet run", serializedString(strings.Repeat("x", 40)), nil, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := pausedCacheQueue(t)
			ctx := context.Background()
			if c.owner != nil {
				if err := q.Cache().Put(ctx, key, c.owner, 300*time.Second); err != nil {
					t.Fatal(err)
				}
			}
			for _, raw := range payloads {
				pushRaw(t, q, "default", raw)
			}
			ran := &ranN{}
			reg := handlers.NewRegistry()
			reg.HandleFunc(debouncedClass, ran.handler)
			w, logs := newTestWorker(t, q, reg, testConfig(), nil)
			runWorker(t, w, 30*time.Second)
			if got := ran.got(); !slices.Equal(got, c.want) {
				t.Fatalf("ran n = %v; want %v\n%s", got, c.want, logs)
			}
			if rows, failed := jobRows(t, q), failedRows(t, q); len(rows) != 0 || len(failed) != 0 {
				t.Fatalf("left %d jobs and %d failed jobs; want none", len(rows), len(failed))
			}
			if n := strings.Count(logs.String(), `"outcome":"debounced"`); n != c.delete {
				t.Fatalf("%d jobs logged as debounced; want %d\n%s", n, c.delete, logs)
			}
			v, ok, err := q.Cache().Get(ctx, key)
			if err != nil || ok != (c.owner != nil) || (ok && !bytes.Equal(v, c.owner)) {
				t.Fatalf("the key is %q %v %v after the run; want it untouched (%q)", v, ok, err, c.owner)
			}
		})
	}
}

// TestDebounceWithoutASharedCache: when the app's cache store is not one
// Go shares (file, memcached...), Go cannot tell a superseded dispatch: it
// gives the jobs back to PHP untouched, reports a configuration problem,
// and runs none.
func TestDebounceWithoutASharedCache(t *testing.T) {
	payloads, _ := debouncedRows(t)
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite)) // CACHE_STORE=file, say
	pushRaw(t, q, "default", payloads[0])
	ran := &ranN{}
	reg := handlers.NewRegistry()
	reg.HandleFunc(debouncedClass, ran.handler)
	w, logs := newTestWorker(t, q, reg, testConfig(), nil)
	runWorker(t, w, 30*time.Second)
	if got := ran.got(); len(got) != 0 {
		t.Fatalf("ran %v without knowing the owner", got)
	}
	if rows := jobRows(t, q); len(rows) != 1 || rows[0].Attempts != 0 || rows[0].ReservedAt.Valid {
		t.Fatalf("the job should be back untouched: %+v", rows)
	}
	mustContain(t, "log", logs.String(), "given back to PHP workers", "#[DebounceFor]")
	problems := w.problems.All()
	if len(problems) != 1 || problems[0].Kind != configproblem.KindDebounce || problems[0].Class != debouncedClass {
		t.Fatalf("problems %v", problems)
	}
}

// phpHash is PHP's hash('xxh128', s), asked of PHP itself.
func phpHash(t *testing.T, s string) string {
	t.Helper()
	out, err := osexec.Command("php", "-r", `echo hash("xxh128", $argv[1]);`, s).Output()
	if err != nil {
		t.Skipf("php is needed for PHP's xxh128: %v", err)
	}
	return string(out)
}

// debouncedPayload is a dispatch of command with displayName (what
// displayName() returned) and owner as its debounceOwner.
func debouncedPayload(t *testing.T, displayName string, cmd *phpserialize.Value, owner string) []byte {
	t.Helper()
	cmd.Entries = append(cmd.Entries, phpserialize.Entry{Key: phpserialize.StrKey("debounceOwner"), Value: phpserialize.String(owner)})
	raw, err := payload.BuildObjectPayload(cmd, payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	name, _ := json.Marshal(cmd.Class)
	shown, _ := json.Marshal(displayName)
	return bytes.Replace(raw, []byte(`"displayName":`+string(name)), []byte(`"displayName":`+string(shown)), 1)
}

// TestDebounceKeys: a queued listener's key is named after the xxh128 of
// its listener class (displayName()) with the CallQueuedListener's
// debounceId property, a job's after its class with its public
// $debounceId; a registration's DebounceID (debounceId()) and
// DebounceVia (another store, its own prefix) replace them. Each time
// the superseded dispatch is deleted and the current one runs.
func TestDebounceKeys(t *testing.T) {
	q := pausedCacheQueue(t)
	ctx := context.Background()
	const listener, job, declared = `App\Listeners\SyncUser`, `App\Jobs\Reindex`, `App\Jobs\Notify`
	put := func(key, owner string) {
		t.Helper()
		if err := q.Cache().Put(ctx, key, serializedString(owner), 300*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	listenerCmd := func() *phpserialize.Value {
		return phpserialize.Object(`Illuminate\Events\CallQueuedListener`,
			phpserialize.Public("class", phpserialize.String(listener)), phpserialize.Public("method", phpserialize.String("handle")),
			phpserialize.Public("debounceId", phpserialize.Int(7)))
	}
	put("laravel_debounced_job:"+phpHash(t, listener)+":7", "new-listener")
	put(`laravel_debounced_job:App\Jobs\Reindex:shop-9`, "new-job")
	// DebounceVia("other"): a second database store, its own prefix on
	// the same table.
	otherStore := jobqueue.StateStore{Driver: "database", Prefix: "other_", Cache: dbcache.New(q.SQL(), q.Config().CacheTable, "")}
	if err := otherStore.Cache.Put(ctx, `other_laravel_debounced_job:App\Jobs\Notify:user-3`, serializedString("new-declared"), 300*time.Second); err != nil {
		t.Fatal(err)
	}
	type dispatch struct {
		class, display string
		cmd            *phpserialize.Value
		owner          string
		runs           bool
	}
	jobCmd := func() *phpserialize.Value {
		return phpserialize.Object(job, phpserialize.Public("debounceId", phpserialize.String("shop-9")))
	}
	declaredCmd := func() *phpserialize.Value {
		return phpserialize.Object(declared, phpserialize.Public("userId", phpserialize.Int(3)))
	}
	dispatches := []dispatch{
		{listener, listener, listenerCmd(), "old-listener", false}, {listener, listener, listenerCmd(), "new-listener", true},
		{job, job, jobCmd(), "old-job", false}, {job, job, jobCmd(), "new-job", true},
		{declared, declared, declaredCmd(), "old-declared", false}, {declared, declared, declaredCmd(), "new-declared", true},
	}
	uuids := map[string]dispatch{}
	for _, d := range dispatches {
		raw := debouncedPayload(t, d.display, d.cmd, d.owner)
		p, _ := payload.Parse(raw)
		uuids[p.UUID] = d
		pushRaw(t, q, "default", raw)
	}
	ran := newCounter()
	reg := handlers.NewRegistry()
	count := func(_ context.Context, job *handlers.Job) error { ran.add(job); return nil }
	reg.HandleFunc(listener, count)
	reg.HandleFunc(job, count)
	reg.HandleFunc(declared, count, handlers.DebounceID(func(cmd *payload.Command) (string, error) {
		v, err := cmd.Object.Prop("userId")
		return fmt.Sprintf("user-%d", v.Int), err
	}), handlers.DebounceVia("other"))
	cfg := testConfig()
	cfg.StateStores = map[string]jobqueue.StateStore{"other": otherStore}
	w, logs := newTestWorker(t, q, reg, cfg, nil)
	runWorker(t, w, 30*time.Second)
	for uuid, d := range uuids {
		if got := ran.count(uuid) == 1; got != d.runs {
			t.Errorf("%s owned by %s: ran %v, want %v\n%s", d.class, d.owner, got, d.runs, logs)
		}
	}
	if rows := jobRows(t, q); len(rows) != 0 {
		t.Fatalf("%d jobs left", len(rows))
	}
}

// TestDebouncedChainLinkEndsTheChain: a superseded dispatch that is a link
// of a chain (Laravel 8.83's real chain, its command given a
// debounceOwner) is deleted without running and without pushing the next
// link, as CallQueuedHandler returns before ensureNextJobInChainIsDispatched.
func TestDebouncedChainLinkEndsTheChain(t *testing.T) {
	q := pausedCacheQueue(t)
	p, err := payload.Parse(fixture(t, "chain.json"))
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := payload.DecodeCommand(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Object.Entries = append(cmd.Object.Entries, phpserialize.Entry{Key: phpserialize.StrKey("debounceOwner"), Value: phpserialize.String("stale")})
	command, err := cmd.Serialize()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(fixture(t, "chain.json"), &doc); err != nil {
		t.Fatal(err)
	}
	doc["data"].(map[string]any)["command"] = string(command)
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Cache().Put(context.Background(), `laravel_debounced_job:App\Jobs\ChainLinkJob:`, serializedString("current"), 300*time.Second); err != nil {
		t.Fatal(err)
	}
	pushRaw(t, q, "chains", raw)
	ran := newCounter()
	reg := handlers.NewRegistry()
	reg.HandleFunc(`App\Jobs\ChainLinkJob`, func(_ context.Context, job *handlers.Job) error { ran.add(job); return nil })
	cfg := testConfig()
	cfg.Queues = []string{"chains"}
	w, logs := newTestWorker(t, q, reg, cfg, nil)
	runWorker(t, w, 30*time.Second)
	if ran.total() != 0 || len(jobRows(t, q)) != 0 || len(failedRows(t, q)) != 0 {
		t.Fatalf("ran %d, %d rows, %d failed; want the link deleted and no next link\n%s", ran.total(), len(jobRows(t, q)), len(failedRows(t, q)), logs)
	}
	mustContain(t, "log", logs.String(), `"outcome":"debounced"`)
}
