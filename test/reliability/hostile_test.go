package reliability

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

const noopClass = `App\Jobs\NoopJob`

// hostileKind is one kind of bad job and the words its failed_jobs
// exception must contain.
type hostileKind struct {
	name  string
	cause []string
	make  func(t *testing.T, h *hostileEnv) []byte
}

type hostileEnv struct {
	enc, wrong *payload.Encrypter
}

// withCommand is a NoopJob payload whose data.command is replaced.
func withCommand(t *testing.T, command string) []byte {
	t.Helper()
	raw, err := payload.BuildObjectPayload(phpserialize.Object(noopClass), payload.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["data"].(map[string]any)["command"] = command
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func serializedNoop(t *testing.T, props ...phpserialize.Entry) string {
	t.Helper()
	b, err := phpserialize.Serialize(phpserialize.Object(noopClass, props...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newUUID() string { u, _ := payload.NewUUID(); return u }

var hostileKinds = []hostileKind{
	{"invalid JSON", []string{"InvalidPayloadException", "Unable to decode the job payload"}, func(t *testing.T, _ *hostileEnv) []byte {
		return []byte(`{"uuid":"` + newUUID() + `","displayName":"App\\Jobs\\NoopJob","data":{"command":"O:16:`)
	}},
	{"truncated command", []string{"cannot decode the command", "php unserialize"}, func(t *testing.T, _ *hostileEnv) []byte {
		s := serializedNoop(t, phpserialize.Public("podcast", phpserialize.String(newUUID())))
		return withCommand(t, s[:len(s)/2])
	}},
	{"corrupted command", []string{"cannot decode the command", "php unserialize"}, func(t *testing.T, _ *hostileEnv) []byte {
		s := serializedNoop(t, phpserialize.Public("title", phpserialize.String("abc")), phpserialize.Public("n", phpserialize.Int(7)))
		return withCommand(t, strings.Replace(s, `s:5:"title"`, `s:9:"title"`, 1))
	}},
	{"huge declared length", []string{"cannot decode the command", "length exceeds the input size"}, func(t *testing.T, _ *hostileEnv) []byte {
		return withCommand(t, `O:16:"App\Jobs\NoopJob":1:{s:999999999999:"x";N;}`)
	}},
	{"huge declared count", []string{"cannot decode the command", "count exceeds the input size"}, func(t *testing.T, _ *hostileEnv) []byte {
		return withCommand(t, `O:16:"App\Jobs\NoopJob":999999999999:{s:1:"x";N;}`)
	}},
	{"wrong APP_KEY", []string{"cannot decode the command", "The MAC is invalid."}, func(t *testing.T, h *hostileEnv) []byte {
		cmd, err := payload.EncryptCommand(h.wrong, []byte(serializedNoop(t)))
		if err != nil {
			t.Fatal(err)
		}
		return withCommand(t, cmd)
	}},
	{"tampered MAC", []string{"cannot decode the command", "The MAC is invalid."}, func(t *testing.T, h *hostileEnv) []byte {
		cmd, err := payload.EncryptCommand(h.enc, []byte(serializedNoop(t)))
		if err != nil {
			t.Fatal(err)
		}
		return withCommand(t, tamperMAC(t, cmd))
	}},
}

// Rare, big kinds: a few of each in a batch.
var bigKinds = []hostileKind{
	{"1M levels of nesting", []string{"cannot decode the command", "nesting deeper than"}, func(t *testing.T, _ *hostileEnv) []byte {
		const depth = 1_000_000
		var b strings.Builder
		b.WriteString(`O:16:"App\Jobs\NoopJob":1:{s:1:"x";`)
		b.WriteString(strings.Repeat("a:1:{i:0;", depth))
		b.WriteString("N;")
		b.WriteString(strings.Repeat("}", depth))
		b.WriteString("}")
		return withCommand(t, b.String())
	}},
	{"10 MB truncated command", []string{"cannot decode the command", "exceeds the remaining input"}, func(t *testing.T, _ *hostileEnv) []byte {
		s := serializedNoop(t, phpserialize.Public("blob", phpserialize.String(strings.Repeat("x", 10<<20))))
		return withCommand(t, s[:len(s)-40])
	}},
}

func tamperMAC(t *testing.T, cmd string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(cmd)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	mac := []byte(doc["mac"].(string))
	mac[0] ^= 1 // still hex-looking, no longer the MAC
	if mac[0] > 'f' || (mac[0] > '9' && mac[0] < 'a') {
		mac[0] = '0'
	}
	doc["mac"] = string(mac)
	out, _ := json.Marshal(doc)
	return base64.StdEncoding.EncodeToString(out)
}

func randomKey(t *testing.T) (string, *payload.Encrypter) {
	t.Helper()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	enc, err := payload.NewEncrypter(key, "AES-256-CBC")
	if err != nil {
		t.Fatal(err)
	}
	return "base64:" + base64.StdEncoding.EncodeToString(key), enc
}

// testEnvFile writes a .env for cfg's database and tables with APP_KEY key.
func testEnvFile(t *testing.T, cfg appconfig.Config, key string, extra ...string) string {
	t.Helper()
	lines := []string{
		"DB_CONNECTION=" + cfg.Driver, "DB_HOST=" + cfg.Host, fmt.Sprintf("DB_PORT=%d", cfg.Port),
		"DB_DATABASE=" + cfg.Database, "DB_USERNAME=" + cfg.Username, "DB_PASSWORD=" + cfg.Password.Reveal(),
		"DB_QUEUE_TABLE=" + cfg.JobsTable, "APP_KEY=" + key,
	}
	path := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(path, []byte(strings.Join(append(lines, extra...), "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// laraworker starts the laraworker binary's `work` on envFile.
func laraworker(t *testing.T, envFile string, cfg appconfig.Config, args ...string) *proc {
	t.Helper()
	all := append([]string{"work", "--env", envFile, "--failed-table", cfg.FailedTable, "--batches-table", cfg.BatchesTable,
		"--sleep", "0.1"}, args...)
	return startProc(t, "laraworker", cleanEnv(), bins.laraworker, all...)
}

// TestHostileInputs feeds a running `laraworker work` 1,000 bad jobs twice
// (invalid JSON, truncated/corrupted commands, absurd declared lengths and
// counts, a wrong APP_KEY, a tampered MAC, 1M levels of nesting, 10 MB
// payloads) plus jobs of a class without handler. Every bad job must end in
// failed_jobs with its original payload and a message naming the cause,
// the unrouted ones must stay untouched (and fail naming their class under
// --unrouted=fail), the worker must keep running jobs, and its RSS must
// not grow from one batch to the next.
func TestHostileInputs(t *testing.T) {
	cfg := testdb.Config(t, appconfig.EngineMySQL)
	needBins(t)
	q := testdb.Open(t, cfg)
	key, enc := randomKey(t)
	_, wrong := randomKey(t)
	h := &hostileEnv{enc: enc, wrong: wrong}
	envFile := testEnvFile(t, cfg, key)

	w := laraworker(t, envFile, cfg, "--route", noopClass+"=noop", "--concurrency", "4", "--memory", "0")
	good := func(n int) {
		t.Helper()
		raw, _ := payload.BuildObjectPayload(phpserialize.Object(noopClass), payload.BuildOptions{})
		pushCopies(t, q, raw, "default", n)
		// An encrypted job the worker's key decrypts: once the key is known
		// good, a MAC that does not match is the job's fault and fails as
		// in PHP (before that, the worker takes it for a wrong APP_KEY and
		// gives the job back).
		encrypted, _ := payload.BuildObjectPayload(phpserialize.Object(noopClass), payload.BuildOptions{Encrypter: enc})
		pushCopies(t, q, encrypted, "default", 1)
		waitFor(t, time.Minute, "good jobs to run", func() bool {
			return count(t, q.DB(), "select count(*) from "+cfg.JobsTable+" where payload not like '%Unrouted%'") == 0
		})
	}
	good(20)
	rssStart := rssKB(t, w.pid())

	const batch = 1000
	kindOf := map[string]hostileKind{}
	unrouted, _ := payload.BuildObjectPayload(phpserialize.Object(`App\Jobs\Unrouted`, phpserialize.Public("n", phpserialize.Int(1))), payload.BuildOptions{})
	pushBatch := func() int {
		var items []jobqueue.PushItem
		add := func(k hostileKind) {
			raw := k.make(t, h)
			kindOf[string(raw)] = k
			items = append(items, jobqueue.PushItem{Payload: raw})
		}
		for _, k := range bigKinds {
			for range 3 {
				add(k)
			}
		}
		nUnrouted := 0
		for i := 0; len(items) < batch; i++ {
			if i%10 == 9 {
				items = append(items, jobqueue.PushItem{Payload: unrouted})
				nUnrouted++
				continue
			}
			add(hostileKinds[i%len(hostileKinds)])
		}
		// Big payloads one per statement: a multi-row insert of several
		// would exceed MariaDB's max_allowed_packet (16 MB).
		for i := 0; i < len(items); {
			n := 50
			if len(items[i].Payload) > 1<<20 {
				n = 1
			}
			chunk := items[i:min(i+n, len(items))]
			for len(chunk) > 1 && len(chunk[len(chunk)-1].Payload) > 1<<20 {
				chunk = chunk[:len(chunk)-1]
			}
			if err := q.PushMany(context.Background(), chunk); err != nil {
				t.Fatal(err)
			}
			i += len(chunk)
		}
		return len(items) - nUnrouted
	}

	var rss, peaks []int64
	totalBad, unroutedLeft := 0, 0
	for round := 1; round <= 2; round++ {
		start := time.Now()
		stopSampling := sampleRSS(t, w.pid())
		bad := pushBatch()
		totalBad += bad
		unroutedLeft += batch - bad
		waitFor(t, 3*time.Minute, "hostile jobs to be failed", func() bool {
			return count(t, q.DB(), "select count(*) from "+cfg.FailedTable) == totalBad
		})
		if w.exited() {
			t.Fatalf("the worker exited on hostile input: %v\n%s", w.err, tail(w.out.String()))
		}
		good(10)
		peaks = append(peaks, stopSampling())
		rss = append(rss, rssKB(t, w.pid()))
		t.Logf("round %d: %d hostile jobs failed, %d unrouted left, in %s; worker RSS peak %d kB, after %d kB",
			round, bad, batch-bad, time.Since(start).Round(time.Millisecond), peaks[len(peaks)-1], rss[len(rss)-1])
	}
	if left := count(t, q.DB(), "select count(*) from "+cfg.JobsTable); left != unroutedLeft {
		t.Errorf("%d jobs left, want the %d unrouted ones", left, unroutedLeft)
	}
	if n := count(t, q.DB(), "select count(*) from "+cfg.JobsTable+" where attempts <> 0 or reserved_at is not null"); n != 0 {
		t.Errorf("%d unrouted jobs were touched (attempts or reserved_at changed)", n)
	}
	checkHostileFailures(t, failedRows(t, q.DB(), cfg.FailedTable), kindOf)

	// Bounded memory: a fixed ceiling (4 concurrent 10 MB jobs and their
	// decoded copies fit well below it), and the second identical batch
	// must not need much more than the first (no leak).
	t.Logf("RSS: start %d kB; peak %d kB in batch 1, %d kB in batch 2", rssStart, peaks[0], peaks[1])
	if peaks[0] > rssCeilingKB || peaks[1] > rssCeilingKB || peaks[1] > peaks[0]*3/2+32<<10 {
		t.Errorf("worker RSS peaked at %d kB then %d kB (ceiling %d kB, start %d kB)", peaks[0], peaks[1], rssCeilingKB, rssStart)
	}
	w.stop(t, 30*time.Second)

	// --unrouted=fail: the class without handler fails, named.
	w = laraworker(t, envFile, cfg, "--route", noopClass+"=noop", "--unrouted", "fail", "--stop-when-empty")
	if err := w.wait(t, time.Minute); err != nil {
		t.Fatalf("laraworker --unrouted=fail: %v\n%s", err, tail(w.out.String()))
	}
	all := failedRows(t, q.DB(), cfg.FailedTable)
	named := 0
	for _, f := range all[totalBad:] {
		if strings.Contains(f.Exception, `No Go handler is registered for job class [App\Jobs\Unrouted]`) && f.Payload == string(unrouted) {
			named++
		}
	}
	if named != unroutedLeft {
		t.Errorf("--unrouted=fail: %d of %d unrouted jobs failed naming their class; first: %.300s", named, unroutedLeft, all[len(all)-1].Exception)
	}
}

// rssCeilingKB bounds the worker's RSS while it fails hostile jobs.
const rssCeilingKB = 512 << 10

// sampleRSS samples pid's RSS every 20ms until the returned function is
// called, which returns the peak.
func sampleRSS(t *testing.T, pid int) func() int64 {
	t.Helper()
	var peak atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
				for _, line := range strings.Split(string(b), "\n") {
					if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
						var kb int64
						fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), &kb)
						if kb > peak.Load() {
							peak.Store(kb)
						}
					}
				}
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 { close(stop); <-done; return peak.Load() }
}

func checkHostileFailures(t *testing.T, rows []failed, kindOf map[string]hostileKind) {
	t.Helper()
	perKind := map[string]int{}
	sample := map[string]string{}
	for _, f := range rows {
		k, ok := kindOf[f.Payload]
		if !ok {
			t.Errorf("failed_jobs row %s does not hold the original payload (%.100s)", f.UUID, f.Payload)
			continue
		}
		perKind[k.name]++
		sample[k.name], _, _ = strings.Cut(f.Exception, "\n")
		if f.UUID == "" {
			t.Errorf("%s: failed_jobs row without uuid", k.name)
		}
		for _, c := range k.cause {
			if !strings.Contains(f.Exception, c) {
				t.Errorf("%s: exception does not say %q:\n%.500s", k.name, c, f.Exception)
				break
			}
		}
	}
	var parts []string
	for _, k := range append(append([]hostileKind{}, hostileKinds...), bigKinds...) {
		parts = append(parts, fmt.Sprintf("%s %d", k.name, perKind[k.name]))
		t.Logf("%s: %.300s", k.name, sample[k.name])
		if perKind[k.name] == 0 {
			t.Errorf("no failed_jobs row for %s", k.name)
		}
	}
	t.Logf("failed per kind: %s", strings.Join(parts, ", "))
}
