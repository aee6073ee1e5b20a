// Command recorder is an exec handler for `laraworker work --route
// CLASS=exec:recorder`: it writes one job_runs row per run into the Laravel
// test app's database (worker "go" unless WORKER_NAME says otherwise), so
// the end-to-end tests count runs by Go and by PHP in the same table.
//
// It reads the job from stdin (handlers.ExecInput) and the database settings
// from the .env that laraworker itself was given (LARAWORKER_ENV).
//
// Flags make it misbehave on purpose:
//
//	-fail MSG      exit 3 with MSG on stderr (a job exception)
//	-release       exit 75 (release with the job's backoff)
//	-when NAME=V   apply -fail/-release only when the command's public
//	               property NAME is the integer, string or bool (true,
//	               false) V
//	-hold D        take D (a Go duration) before recording, and record
//	               when the run started and ended (result "start", "end":
//	               Unix seconds with fractions, as PHP's microtime(true))
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/laraworker/laraworker/store/database"
)

// exitException is any status other than 0 and 75: the exec handler turns
// it into a job exception carrying stderr.
const exitException = 3

// envFile is the .env the recorder reads its database from.
var envFile string

func main() {
	failMsg := flag.String("fail", "", "fail the job with this message")
	release := flag.Bool("release", false, "release the job with its backoff (exit 75)")
	when := flag.String("when", "", "NAME=VALUE: misbehave only for commands whose property NAME has this value")
	hold := flag.Duration("hold", 0, "take this long, and record the run's start and end")
	flag.StringVar(&envFile, "env", os.Getenv("LARAWORKER_ENV"), "the app's .env (exec handlers do not inherit LARAWORKER_ENV)")
	flag.Parse()

	in, cmd, err := readJob()
	if err != nil {
		fatal(err)
	}
	var times map[string]any
	if *hold > 0 {
		start := time.Now()
		time.Sleep(*hold)
		times = map[string]any{"start": unixSeconds(start), "end": unixSeconds(time.Now())}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := record(ctx, in, cmd, times); err != nil {
		fatal(err)
	}
	if *when != "" && !propIs(cmd, *when) {
		return
	}
	switch {
	case *failMsg != "":
		fmt.Fprint(os.Stderr, *failMsg)
		os.Exit(exitException)
	case *release:
		os.Exit(handlers.ExitRelease)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "recorder:", err)
	os.Exit(1)
}

// readJob decodes stdin and, for object jobs, the command (decrypted with
// the app's key when needed).
func readJob() (handlers.ExecInput, *payload.Command, error) {
	var in handlers.ExecInput
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		return in, nil, fmt.Errorf("reading the job from stdin: %w", err)
	}
	p, err := payload.Parse(in.Payload)
	if err != nil || p.Data.Command == "" {
		return in, nil, err
	}
	enc, err := encrypter()
	if err != nil {
		return in, nil, err
	}
	cmd, err := payload.DecodeCommand(p, enc)
	return in, cmd, err
}

func loadConfig() (appconfig.Config, error) {
	cfg, _, err := appconfig.Load(context.Background(), appconfig.Options{EnvOnly: true, EnvFile: envFile})
	return cfg, err
}

func encrypter() (*payload.Encrypter, error) {
	cfg, err := loadConfig()
	if err != nil || !cfg.AppKey.IsSet() {
		return nil, err
	}
	key, err := payload.ParseKey(cfg.AppKey.Reveal())
	if err != nil {
		return nil, err
	}
	cipher := cfg.AppCipher
	if cipher == "" {
		cipher = "AES-256-CBC"
	}
	return payload.NewEncrypter(key, cipher)
}

// unixSeconds is t as microtime(true) gives it.
func unixSeconds(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

// record inserts the job_runs row: the same columns RunRecorder.php fills;
// extra goes into the result too.
func record(ctx context.Context, in handlers.ExecInput, cmd *payload.Command, extra map[string]any) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	q, err := database.Open(ctx, cfg, database.Options{})
	if err != nil {
		return err
	}
	defer q.Close()
	res := resultOf(cmd)
	for k, v := range extra {
		res[k] = v
	}
	result, err := json.Marshal(res)
	if err != nil {
		return err
	}
	worker := os.Getenv("WORKER_NAME")
	if worker == "" {
		worker = "go"
	}
	_, err = q.DB().ExecContext(ctx, q.Dialect().Rebind(
		`insert into job_runs (uuid, class, attempt, worker, result, created_at) values (?, ?, ?, ?, ?, ?)`),
		in.UUID, in.DisplayName, in.Attempts, worker, string(result), time.Now().UTC().Format(time.DateTime))
	return err
}

// resultOf lists what Go saw of the command: its public scalar properties
// (the class's own and the trait ones alike) and how many chain links
// remain, like ChainLinkJob's "remaining".
func resultOf(cmd *payload.Command) map[string]any {
	out := map[string]any{}
	if cmd == nil {
		return out
	}
	for _, e := range cmd.Object.Entries {
		if e.Key.IsInt || strings.HasPrefix(e.Key.Str, "\x00") {
			continue
		}
		if v, ok := scalar(e.Value.Deref()); ok {
			out[e.Key.Str] = v
		}
	}
	out["remaining"] = len(cmd.Queueable().Chained)
	return out
}

func scalar(v *phpserialize.Value) (any, bool) {
	switch v.Kind {
	case phpserialize.KindNull:
		return nil, true
	case phpserialize.KindBool:
		return v.Bool, true
	case phpserialize.KindInt:
		return v.Int, true
	case phpserialize.KindFloat:
		return v.Float, true
	case phpserialize.KindString:
		return string(v.Str), true
	}
	return nil, false
}

func propIs(cmd *payload.Command, cond string) bool {
	name, want, ok := strings.Cut(cond, "=")
	if !ok || cmd == nil {
		return false
	}
	v, err := cmd.Object.Prop(name)
	if err != nil {
		return false
	}
	switch v = v.Deref(); v.Kind {
	case phpserialize.KindInt:
		return strconv.FormatInt(v.Int, 10) == want
	case phpserialize.KindString:
		return string(v.Str) == want
	case phpserialize.KindBool:
		return strconv.FormatBool(v.Bool) == want
	}
	return false
}
