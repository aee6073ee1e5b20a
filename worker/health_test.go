package worker

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/clock"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
	"github.com/laraworker/laraworker/worker/internal/configproblem"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

const secretClass = `App\Jobs\Secret`

// pushEncrypted pushes a ShouldBeEncrypted job of secretClass, encrypted
// with enc, and returns its uuid.
func pushEncrypted(t *testing.T, q *database.Queue, enc *payload.Encrypter) string {
	t.Helper()
	raw, err := payload.BuildObjectPayload(phpserialize.Object(secretClass, phpserialize.Public("card", phpserialize.String("4242"))),
		payload.BuildOptions{Encrypter: enc})
	if err != nil {
		t.Fatal(err)
	}
	pushRaw(t, q, "", raw)
	p, _ := payload.Parse(raw)
	return p.UUID
}

func newKeyEncrypter(t *testing.T) *payload.Encrypter {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	enc, err := payload.NewEncrypter(key, payload.DefaultCipher)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// A wrong or missing APP_KEY is the worker's configuration, not the job's
// fault: encrypted jobs go back untouched (PHP workers, with the right
// key, run them), their class is no longer claimed, the problem is logged
// once (not once per job), counted, and reported by Health. Nothing lands
// in failed_jobs, and the other classes run as usual.
func TestAKeyProblemGivesJobsBackAndStopsTheClass(t *testing.T) {
	appKey := newKeyEncrypter(t)
	for _, c := range []struct {
		name    string
		workers *payload.Encrypter // the worker's key
		want    string
	}{
		{"no key", nil, "no APP_KEY"},
		{"wrong key", newKeyEncrypter(t), "The MAC is invalid."},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
			for range 3 {
				pushEncrypted(t, q, appKey)
			}
			plain := []string{push(t, q, "", classA), push(t, q, "", classA)}
			runs := newCounter()
			reg := handlers.NewRegistry()
			reg.HandleFunc(classA, func(_ context.Context, job *handlers.Job) error { runs.add(job); return nil })
			reg.HandleFunc(secretClass, func(_ context.Context, job *handlers.Job) error { runs.add(job); return nil })
			cfg := testConfig()
			cfg.Concurrency = 1
			cfg.Metrics = NewMetrics(prometheus.NewRegistry())
			w, logs := newTestWorker(t, q, reg, cfg, c.workers)
			if reason := runWorker(t, w, 30*time.Second); reason != StopEmpty {
				t.Fatalf("stopped for %s", reason)
			}
			for _, uuid := range plain {
				if runs.count(uuid) != 1 {
					t.Fatalf("a plain job ran %d times", runs.count(uuid))
				}
			}
			if f := failedRows(t, q); len(f) != 0 {
				t.Fatalf("%d jobs in failed_jobs because of the worker's key: %s", len(f), f[0].Exception)
			}
			rows := jobRows(t, q)
			if len(rows) != 3 {
				t.Fatalf("want the 3 encrypted jobs left for PHP, got %d rows", len(rows))
			}
			for _, r := range rows {
				if r.Attempts != 0 || r.ReservedAt.Valid {
					t.Fatalf("an encrypted job was not given back untouched: %+v", r)
				}
			}
			if w.Claimed() != 3 {
				t.Errorf("claimed %d jobs, want the 2 plain ones and 1 encrypted (then its class is not claimed)", w.Claimed())
			}
			health := w.Health()
			if health == nil || !strings.Contains(health.Error(), secretClass) || !strings.Contains(health.Error(), c.want) {
				t.Fatalf("Health() = %v, want the key problem of %s", health, secretClass)
			}
			if n := strings.Count(logs.String(), "configuration problem"); n != 1 {
				t.Errorf("the key problem was logged %d times, want once", n)
			}
			if got := testutil.ToFloat64(cfg.Metrics.config.WithLabelValues(configproblem.KindAppKey)); got != 1 {
				t.Errorf("laraworker_config_errors_total{kind=app_key} = %v, want 1", got)
			}
		})
	}
}

// A missing table is a setup problem: claims are retried (not failed),
// logged once a minute, and Health says so until a claim works again.
func TestAMissingTableIsReportedNotLoggedPerClaim(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(context.Context, *handlers.Job) error { return nil })
	exec(t, q, "alter table "+q.Config().JobsTable+" rename to moved_away")
	cfg := testConfig()
	cfg.Sleep = time.Millisecond
	cfg.StopWhenEmpty = false
	fake := withFakeClock(&cfg)
	store := newFaultStore(q) // counts the claims
	w, logs := newTestWorker(t, store, reg, cfg, nil)
	run := startWorker(w, 30*time.Second)
	testwait.Until(t, 10*time.Second, "Health to report the problem", func() bool { return w.Health() != nil })
	// A failed claim waits a second before the next: three more.
	claims := store.count("claim")
	testwait.Until(t, 10*time.Second, "three more failed claims", func() bool {
		nextClaim(fake)
		return store.count("claim") >= claims+3
	})
	health := w.Health()
	if health == nil || !strings.Contains(health.Error(), "schema") {
		t.Fatalf("Health() = %v, want the missing table", health)
	}
	if n := strings.Count(logs.String(), "configuration problem"); n != 1 {
		t.Errorf("a missing table logged %d times in 4 claims, want once", n)
	}
	exec(t, q, "alter table moved_away rename to "+q.Config().JobsTable)
	testwait.Until(t, 10*time.Second, "Health to clear once a claim works", func() bool {
		nextClaim(fake)
		return w.Health() == nil
	})
	run.stop()
	run.wait(t)
	if err := w.Health(); err != nil {
		t.Fatalf("Health() = %v after the table came back", err)
	}
}

// nextClaim moves the fake clock to a waiting worker's next claim: past
// the sleep after a failed claim. A worker not yet waiting (its lease
// ticker is its only timer) is left alone.
func nextClaim(fake *clock.Fake) {
	if fake.Waiters() >= 2 {
		fake.Advance(time.Second + time.Millisecond)
	}
}

// A handler reaches the worker's logger (with the job's fields), the
// app's resolved configuration and its database.
func TestHandlersReachTheLoggerConfigAndDatabase(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	uuid := push(t, q, "", classA)
	var jobs int
	reg := handlers.NewRegistry()
	reg.HandleFunc(classA, func(ctx context.Context, job *handlers.Job) error {
		app := job.App()
		if app == nil {
			return errors.New("no app")
		}
		if err := app.DB.QueryRowContext(ctx, "select count(*) from "+app.Config.JobsTable).Scan(&jobs); err != nil {
			return err
		}
		job.Logger().Info().Int("jobs", jobs).Msg("counted")
		return nil
	})
	cfg := testConfig()
	cfg.App = &handlers.App{Config: q.Config(), DB: q.DB()}
	w, logs := newTestWorker(t, q, reg, cfg, nil)
	runWorker(t, w, 30*time.Second)
	if f := failedRows(t, q); len(f) != 0 {
		t.Fatalf("handler failed: %s", f[0].Exception)
	}
	if jobs != 1 {
		t.Fatalf("the handler counted %d jobs through the app's database, want its own", jobs)
	}
	mustContain(t, "log", logs.String(), `"message":"counted"`, `"uuid":"`+uuid+`"`, `"class":"App\\Jobs\\SendMail"`, `"worker":"default"`)
}

// Once the key has decrypted a command, a MAC that does not match is the
// job's fault (tampered, or written by another app): it fails as PHP
// fails it, and the class is not stopped.
func TestATamperedJobFailsOnceTheKeyIsKnownGood(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	key := newKeyEncrypter(t)
	good := pushEncrypted(t, q, key)
	bad := pushEncrypted(t, q, newKeyEncrypter(t)) // another app's key: the MAC does not match
	after := pushEncrypted(t, q, key)
	runs := newCounter()
	reg := handlers.NewRegistry()
	reg.HandleFunc(secretClass, func(_ context.Context, job *handlers.Job) error { runs.add(job); return nil })
	cfg := testConfig()
	cfg.Concurrency = 1 // in id order: the good job first
	w, _ := newTestWorker(t, q, reg, cfg, key)
	runWorker(t, w, 30*time.Second)
	if runs.count(good) != 1 || runs.count(after) != 1 || runs.count(bad) != 0 {
		t.Fatalf("runs: good %d, after %d, bad %d", runs.count(good), runs.count(after), runs.count(bad))
	}
	f := failedRows(t, q)
	if len(f) != 1 || f[0].UUID != bad || !strings.Contains(f[0].Exception, "The MAC is invalid.") {
		t.Fatalf("want the tampered job failed with PHP's DecryptException text, got %+v", f)
	}
	if err := w.Health(); err != nil {
		t.Fatalf("a tampered job is not a configuration problem: %v", err)
	}
}

// A class stopped by a key problem is probed again a minute later.
func TestAKeyProblemIsProbedAgain(t *testing.T) {
	q := testdb.Open(t, testdb.Config(t, appconfig.EngineSQLite))
	pushEncrypted(t, q, newKeyEncrypter(t))
	cfg := testConfig()
	fake := withFakeClock(&cfg)
	reg := handlers.NewRegistry()
	reg.HandleFunc(secretClass, func(context.Context, *handlers.Job) error { return nil })
	w, _ := newTestWorker(t, q, reg, cfg, newKeyEncrypter(t))
	runWorker(t, w, 30*time.Second)
	if got, _ := w.problems.BlockedClasses(w.clock.Now()); len(got) != 1 {
		t.Fatalf("blocked %v, want the class", got)
	}
	if opts, ok := w.claimOptions(); ok || len(opts.DisplayNames) != 0 {
		t.Fatalf("claims while the class is blocked: %v (ok %v), want none", opts.DisplayNames, ok)
	}
	fake.Advance(configproblem.KeyProbeEvery + time.Second)
	if got, _ := w.problems.BlockedClasses(w.clock.Now()); len(got) != 0 {
		t.Fatalf("after %s the class must be claimed again once, got %v blocked", configproblem.KeyProbeEvery, got)
	}
	// The claims' filter, kept between claims, ends with the block.
	if opts, ok := w.claimOptions(); !ok || !slices.Equal(opts.DisplayNames, []string{secretClass}) {
		t.Fatalf("after the block the claims take %v (ok %v), want [%s]", opts.DisplayNames, ok, secretClass)
	}
	if w.Health() == nil {
		t.Fatal("the problem stays reported until it is gone")
	}
}
