package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

func fixtureJob(t *testing.T, name string) *Job {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "payloads", name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := payload.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return NewJob(7, "default", 1, p, Env{})
}

func TestRegistryRoutesCaseInsensitivelyWithMiddlewareInOrder(t *testing.T) {
	reg := NewRegistry()
	var trail []string
	mw := func(name string) Middleware {
		return func(next Handler) Handler {
			return HandlerFunc(func(ctx context.Context, job *Job) error {
				trail = append(trail, name)
				return next.Handle(ctx, job)
			})
		}
	}
	reg.Use(mw("outer"), mw("inner"))
	reg.HandleFunc(`App\Jobs\NoopJob`, func(context.Context, *Job) error { trail = append(trail, "handler"); return nil })
	h, err := reg.Lookup(`app\jobs\noopjob`)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(context.Background(), fixtureJob(t, "noop.json")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(trail, ","); got != "outer,inner,handler" {
		t.Fatalf("order %s", got)
	}
	if _, err := reg.Lookup(`App\Jobs\Other`); !errors.Is(err, ErrNoHandler) {
		t.Fatalf("unknown class: %v", err)
	}
	if names := reg.Names(); len(names) != 1 || names[0] != `App\Jobs\NoopJob` {
		t.Fatalf("names %v", names)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("registering a class twice must panic")
		}
	}()
	reg.HandleFunc(`APP\JOBS\NOOPJOB`, func(context.Context, *Job) error { return nil })
}

type scalarsCommand struct {
	PodcastID int64          `php:"podcastId"`
	Title     string         `php:"title"`
	Tags      []string       `php:"tags"`
	Meta      map[string]any `php:"meta"`
}

type modelsCommand struct {
	Podcast payload.ModelIdentifier `php:"podcast"`
}

func TestTypedHandlersDecodeTheCommand(t *testing.T) {
	reg := NewRegistry()
	var got scalarsCommand
	Register(reg, `App\Jobs\ScalarsJob`, func(_ context.Context, _ *Job, cmd *scalarsCommand) error {
		got = *cmd
		return nil
	})
	h, _ := reg.Lookup(`App\Jobs\ScalarsJob`)
	if err := h.Handle(context.Background(), fixtureJob(t, "scalars.json")); err != nil {
		t.Fatal(err)
	}
	if got.PodcastID != 42 || !strings.Contains(got.Title, "wörld") || strings.Join(got.Tags, ",") != "news,tech" || got.Meta["7"] != "int-key" {
		t.Fatalf("decoded %+v", got)
	}

	var models modelsCommand
	Register(reg, `App\Jobs\ModelsJob`, func(_ context.Context, _ *Job, cmd *modelsCommand) error {
		models = *cmd
		return nil
	})
	h, _ = reg.Lookup(`App\Jobs\ModelsJob`)
	if err := h.Handle(context.Background(), fixtureJob(t, "models.json")); err != nil {
		t.Fatal(err)
	}
	if models.Podcast.Class == "" || models.Podcast.ID == nil {
		t.Fatalf("model identifier %+v", models.Podcast)
	}

	type wrong struct {
		Title int64 `php:"title"`
	}
	Register(reg, `App\Jobs\OptionsJob`, func(context.Context, *Job, *wrong) error { return nil })
	job := fixtureJob(t, "scalars.json")
	h, _ = reg.Lookup(`App\Jobs\OptionsJob`)
	err := h.Handle(context.Background(), job)
	if err == nil || job.Decision().Action != ActionFail {
		t.Fatalf("a command that does not fit must fail the job: %v %+v", err, job.Decision())
	}
}

func TestRecoverTurnsPanicsIntoErrors(t *testing.T) {
	h := Recover()(HandlerFunc(func(context.Context, *Job) error { panic("kaboom") }))
	err := h.Handle(context.Background(), fixtureJob(t, "noop.json"))
	var p *PanicError
	if !errors.As(err, &p) || p.Value != "kaboom" || !strings.Contains(string(p.Stack), "handlers_test.go") {
		t.Fatalf("got %v", err)
	}
}

func TestFirstDecisionWins(t *testing.T) {
	job := fixtureJob(t, "noop.json")
	job.Delete()
	job.Release(time.Second)
	if job.Decision().Action != ActionDelete {
		t.Fatal("a deleted job must not be released afterwards")
	}
}

func TestSplitArgs(t *testing.T) {
	for in, want := range map[string]string{
		`./x.sh a b`:           `./x.sh|a|b`,
		`php 'my script.php'`:  `php|my script.php`,
		`a "b c" d`:            `a|b c|d`,
		`  spaced   out  `:     `spaced|out`,
		`echo $HOME; rm -rf /`: `echo|$HOME;|rm|-rf|/`,
	} {
		got, err := SplitArgs(in)
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	if _, err := SplitArgs(`a "b`); err == nil {
		t.Error("unclosed quote must be an error")
	}
}

func writeScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "handler.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestExecHandlerContract(t *testing.T) {
	dir := t.TempDir()
	stdinCopy := filepath.Join(dir, "stdin.json")
	ok := writeScript(t, "cat > "+stdinCopy+"\necho \"$LARAWORKER_JOB_CLASS\" > "+filepath.Join(dir, "env")+"\nexit 0\n")
	h, err := Builtin("exec:"+ok, zerolog.Nop(), nil)
	if err != nil {
		t.Fatal(err)
	}
	job := fixtureJob(t, "scalars.json")
	if err := h.Handle(context.Background(), job); err != nil {
		t.Fatalf("exit 0 must succeed: %v", err)
	}
	var in ExecInput
	raw, _ := os.ReadFile(stdinCopy)
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatalf("stdin is not the job JSON: %v\n%s", err, raw)
	}
	if in.UUID != job.UUID || in.ID != 7 || in.DisplayName != `App\Jobs\ScalarsJob` || string(in.Payload) != string(job.Payload.Raw) {
		t.Fatalf("stdin document %+v", in)
	}
	if !strings.Contains(string(in.Command), `"podcastId"`) {
		t.Fatalf("command tree missing: %s", in.Command)
	}
	// The shape's version comes first; the properties are keyed by name
	// (what `jq .command.properties.podcastId` reads).
	var tree struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if !strings.HasPrefix(string(raw), `{"version":2,`) || in.Version != ExecInputVersion ||
		json.Unmarshal(in.Command, &tree) != nil || string(tree.Properties["podcastId"]) != "42" {
		t.Fatalf("version and properties by name: %s", raw)
	}
	if env, _ := os.ReadFile(filepath.Join(dir, "env")); strings.TrimSpace(string(env)) != `App\Jobs\ScalarsJob` {
		t.Fatalf("LARAWORKER_JOB_CLASS = %q", env)
	}

	release, _ := Builtin("exec:"+writeScript(t, "cat >/dev/null; exit 75\n"), zerolog.Nop(), nil)
	var rel *ReleaseError
	if err := release.Handle(context.Background(), job); !errors.As(err, &rel) || !rel.UseBackoff {
		t.Fatalf("exit 75 must release with backoff: %v", err)
	}

	fail, _ := Builtin("exec:"+writeScript(t, "cat >/dev/null; echo 'lots of noise' >&2; echo 'disk full' >&2; exit 3\n"), zerolog.Nop(), nil)
	err = fail.Handle(context.Background(), job)
	var ee *ExecError
	if !errors.As(err, &ee) || ee.Status != 3 || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("exit 3 must be an exception with stderr's tail: %v", err)
	}

	slow, _ := Builtin("exec:"+writeScript(t, "cat >/dev/null; sleep 30 & sleep 30\n"), zerolog.Nop(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = slow.Handle(ctx, job)
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("a command past its timeout must be killed (with its children): %v after %s", err, time.Since(start))
	}
}

func TestBuiltinRejectsUnknownHandlers(t *testing.T) {
	for _, spec := range []string{"", "nope", "exec:", "exec:'unclosed"} {
		if _, err := Builtin(spec, zerolog.Nop(), nil); err == nil {
			t.Errorf("%q must be rejected", spec)
		}
	}
}

func TestMetricsMiddlewareCountsRunsByClassAndResult(t *testing.T) {
	promReg := prometheus.NewRegistry()
	reg := NewRegistry()
	reg.Use(Metrics(promReg))
	calls := 0
	reg.HandleFunc(`App\Jobs\NoopJob`, func(context.Context, *Job) error {
		calls++
		if calls == 2 {
			return errors.New("second run fails")
		}
		return nil
	})
	h, _ := reg.Lookup(`App\Jobs\NoopJob`)
	for i := 0; i < 3; i++ {
		_ = h.Handle(context.Background(), fixtureJob(t, "noop.json"))
	}
	families, err := promReg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			counts[labels["class"]+"/"+labels["result"]] = m.GetHistogram().GetSampleCount()
		}
	}
	if counts[`App\Jobs\NoopJob/ok`] != 2 || counts[`App\Jobs\NoopJob/error`] != 1 {
		t.Fatalf("histogram counts %v", counts)
	}
}

// stdout of a run is logged (success or not); a failure's message is
// stderr's tail only, as documented.
func TestExecOutputs(t *testing.T) {
	var logs bytes.Buffer
	job := fixtureJob(t, "scalars.json")
	ok, _ := Builtin("exec:"+writeScript(t, "cat >/dev/null; echo 'resized 3 images'\n"), zerolog.New(&logs), nil)
	if err := ok.Handle(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `"stdout":"resized 3 images"`) || !strings.Contains(logs.String(), job.UUID) {
		t.Fatalf("a successful run's stdout is not logged: %s", logs.String())
	}
	fail, _ := Builtin("exec:"+writeScript(t, "cat >/dev/null; echo 'progress 50%'; echo 'disk full' >&2; exit 3\n"), zerolog.New(&logs), nil)
	err := fail.Handle(context.Background(), job)
	if err == nil || !strings.Contains(err.Error(), "disk full") || strings.Contains(err.Error(), "progress") {
		t.Fatalf("the failure message must be stderr's tail only: %v", err)
	}
	if !strings.Contains(logs.String(), "progress 50%") {
		t.Fatal("a failed run's stdout is not logged")
	}
}

// A handler may be a third-party program: of the worker's environment it
// gets only what a program needs to run (ExecEnv), and what PassEnv names.
func TestExecGetsAnAllowListEnvironment(t *testing.T) {
	t.Setenv("DB_PASSWORD", "hunter2")
	t.Setenv("APP_KEY", "base64:c2VjcmV0")
	t.Setenv("LARAWORKER_DB_PASSWORD", "hunter3")
	t.Setenv("DATABASE_URL", "mysql://u:hunter4@h/db")
	t.Setenv("REDIS_PASSWORD", "hunter5")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "hunter6")
	t.Setenv("MAIL_PASSWORD", "hunter7")
	t.Setenv("MY_SERVICE_TOKEN", "passed-on-purpose")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("LC_TIME", "C")
	t.Setenv("TZ", "UTC")
	dump := filepath.Join(t.TempDir(), "env")
	script := writeScript(t, "cat >/dev/null; env > "+dump+"\n")
	job := fixtureJob(t, "scalars.json")

	h, _ := Builtin("exec:"+script, zerolog.Nop(), nil)
	if err := h.Handle(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	env, _ := os.ReadFile(dump)
	for _, secret := range []string{"hunter", "c2VjcmV0", "MY_SERVICE_TOKEN"} {
		if strings.Contains(string(env), secret) {
			t.Errorf("the handler's environment holds %q", secret)
		}
	}
	for _, want := range []string{"PATH=" + os.Getenv("PATH"), "HOME=", "LANG=C.UTF-8", "LC_TIME=C", "TZ=UTC", "LARAWORKER_JOB_UUID=" + job.UUID} {
		if !strings.Contains(string(env), want) {
			t.Errorf("the handler's environment lacks %s", want)
		}
	}

	passed, _ := Builtin("exec:"+script, zerolog.Nop(), []string{"MY_SERVICE_TOKEN", "DB_PASSWORD"})
	if err := passed.Handle(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	env, _ = os.ReadFile(dump)
	if !strings.Contains(string(env), "MY_SERVICE_TOKEN=passed-on-purpose") || !strings.Contains(string(env), "DB_PASSWORD=hunter2") ||
		strings.Contains(string(env), "hunter3") || strings.Contains(string(env), "hunter6") {
		t.Fatalf("PassEnv must pass MY_SERVICE_TOKEN and DB_PASSWORD and nothing else:\n%s", env)
	}
}
