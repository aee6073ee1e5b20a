package payloadcmd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console/internal/clitest"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

func TestPushStoresTheBuiltPayload(t *testing.T) {
	clitest.ForEachEngine(t, func(t *testing.T, tg *clitest.Target) {
		const uuid = "0b7c8f4e-2f4a-4c55-9a55-3c1f6f0d9a10"
		job := tg.Pushed(t, `\App\Jobs\ReportJob`,
			"--prop", "reportId=42", "--prop", `tags=["a","b,c"]`, "--prop", "title=Größe / 1",
			"--prop", "ratio=0.5", "--prop", `filter={"7":"seven","on":true}`, "--prop", "ratio=0.25",
			"--queue", "reports", "--delay", "30", "--tries", "3", "--backoff", "1,5", "--timeout", "20",
			"--retry-until", "4102444800", "--uuid", uuid)

		// What PHP would serialize: own properties in order (a repeated
		// --prop keeps its place), then InteractsWithQueue and Queueable.
		cmd := phpserialize.Object(`App\Jobs\ReportJob`,
			phpserialize.Public("reportId", phpserialize.Int(42)),
			phpserialize.Public("tags", phpserialize.List(phpserialize.String("a"), phpserialize.String("b,c"))),
			phpserialize.Public("title", phpserialize.String("Größe / 1")),
			phpserialize.Public("ratio", phpserialize.Float(0.25)),
			phpserialize.Public("filter", phpserialize.Array(
				phpserialize.Entry{Key: phpserialize.IntKey(7), Value: phpserialize.String("seven")},
				phpserialize.Entry{Key: phpserialize.StrKey("on"), Value: phpserialize.Bool(true)})),
			phpserialize.Public("tries", phpserialize.Int(3)),
			phpserialize.Public("backoff", phpserialize.List(phpserialize.Int(1), phpserialize.Int(5))),
			phpserialize.Public("timeout", phpserialize.Int(20)),
			phpserialize.Public("retryUntil", phpserialize.Int(4102444800)),
			phpserialize.Public("job", phpserialize.Null()),
			phpserialize.Public("connection", phpserialize.Null()),
			phpserialize.Public("queue", phpserialize.String("reports")),
			phpserialize.Public("chainConnection", phpserialize.Null()),
			phpserialize.Public("chainQueue", phpserialize.Null()),
			phpserialize.Public("chainCatchCallbacks", phpserialize.Null()),
			phpserialize.Public("delay", phpserialize.Int(30)),
			phpserialize.Public("afterCommit", phpserialize.Null()),
			phpserialize.Public("middleware", phpserialize.List()),
			phpserialize.Public("chained", phpserialize.List()),
		)
		want, err := payload.BuildObjectPayload(cmd, payload.BuildOptions{UUID: uuid})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(job.Payload, want) {
			t.Errorf("payload:\n got %s\nwant %s", job.Payload, want)
		}
		if job.Queue != "reports" || job.Attempts != 0 || job.ReservedAt != nil || job.AvailableAt-job.CreatedAt != 30 {
			t.Errorf("row: queue %s attempts %d reserved %v delay %d", job.Queue, job.Attempts, job.ReservedAt, job.AvailableAt-job.CreatedAt)
		}
		p, err := payload.Parse(job.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if *p.MaxTries != 3 || *p.Backoff != "1,5" || *p.Timeout != 20 || *p.RetryUntil != 4102444800 || p.DisplayName != `App\Jobs\ReportJob` {
			t.Errorf("payload keys: %s", job.Payload)
		}
		decoded, err := payload.DecodeCommand(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		var props struct {
			ReportID int64          `php:"reportId"`
			Tags     []string       `php:"tags"`
			Title    string         `php:"title"`
			Filter   map[string]any `php:"filter"`
		}
		if err := decoded.Decode(&props); err != nil {
			t.Fatal(err)
		}
		if props.ReportID != 42 || strings.Join(props.Tags, "|") != "a|b,c" || props.Title != "Größe / 1" || props.Filter["7"] != "seven" {
			t.Errorf("decoded command: %+v", props)
		}
	})
}

// fixture reads a payload PHP wrote (testdata/payloads) and the manifest's
// properties for it, as raw JSON.
func fixture(t *testing.T, file string) (raw []byte, props json.RawMessage) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "payloads", file))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Fixtures []struct {
			File       string          `json:"file"`
			Properties json.RawMessage `json:"properties"`
		} `json:"fixtures"`
	}
	mb, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "payloads", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mb, &manifest); err != nil {
		t.Fatal(err)
	}
	for _, f := range manifest.Fixtures {
		if f.File == file {
			return raw, f.Properties
		}
	}
	t.Fatalf("%s is not in the manifest", file)
	return nil, nil
}

// A push with the same class, properties and uuid stores the very bytes
// Laravel 8.83 stored when dispatching the fixture's job.
func TestPushMatchesLaravelFixtures(t *testing.T) {
	clitest.ForEachEngine(t, func(t *testing.T, tg *clitest.Target) {
		scalars, scalarProps := fixture(t, "scalars.json")
		propsFile := filepath.Join(t.TempDir(), "props.json")
		if err := os.WriteFile(propsFile, scalarProps, 0o600); err != nil {
			t.Fatal(err)
		}
		noop, _ := fixture(t, "noop.json")
		delayed, _ := fixture(t, "delayed.json")
		options, _ := fixture(t, "options.json")
		l12, _ := fixture(t, "l12-delayed.json")
		cases := []struct {
			want []byte
			args []string
		}{
			{scalars, []string{`App\Jobs\ScalarsJob`, "--props", propsFile}},
			{noop, []string{`App\Jobs\NoopJob`}},
			{delayed, []string{`App\Jobs\DelayedJob`, "--prop", "podcastId=42", "--queue", "high", "--delay", "10"}},
			// OptionsJob declares its options before podcastId: --prop keeps
			// that order where --tries and friends would come last.
			{options, []string{`App\Jobs\OptionsJob`, "--prop", "tries=5", "--prop", "maxExceptions=3", "--prop", "backoff=[1,5,10]",
				"--prop", "timeout=30", "--prop", "failOnTimeout=true", "--prop", "retryUntil=4102444800", "--prop", "podcastId=42"}},
			// The option flags replace same-named properties in place.
			{options, []string{`App\Jobs\OptionsJob`, "--prop", "tries=1", "--prop", "maxExceptions=3", "--prop", "backoff=0",
				"--prop", "timeout=1", "--prop", "failOnTimeout=true", "--prop", "retryUntil=1", "--prop", "podcastId=42",
				"--tries", "5", "--backoff", "1,5,10", "--timeout", "30", "--retry-until", "2100-01-01T00:00:00Z"}},
			{l12, []string{`App\Jobs\ProcessPodcast`, "--prop", "podcastId=42", "--queue", "high", "--delay", "10",
				"--laravel-version", "12.11", "--created-at", "1767225600"}},
		}
		for _, c := range cases {
			p, err := payload.Parse(c.want)
			if err != nil {
				t.Fatal(err)
			}
			job := tg.Pushed(t, append(c.args, "--uuid", p.UUID)...)
			if !bytes.Equal(job.Payload, c.want) {
				t.Errorf("%s:\n got %s\nwant %s", c.args[0], job.Payload, c.want)
			}
		}
	})
}

func TestPushEncrypted(t *testing.T) {
	tg := clitest.NewTarget(t, appconfig.EngineSQLite)
	_, stderr, code := tg.Run(t, "push", `App\Jobs\Secret`, "--encrypt")
	if code != 1 || !strings.Contains(stderr, "--encrypt needs an APP_KEY") {
		t.Errorf("without a key: exit %d, %q", code, stderr)
	}
	const key = "base64:bGFyYXdvcmtlciBmaXh0dXJlIGtleSwgMzIgYnl0ZXM="
	t.Setenv("LARAWORKER_APP_KEY", key)
	job := tg.Pushed(t, `App\Jobs\Secret`, "--encrypt", "--prop", "token=abc")
	p, err := payload.Parse(job.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if !payload.IsEncryptedCommand(p.Data.Command) {
		t.Fatalf("command is not encrypted: %s", p.Data.Command)
	}
	k, _ := payload.ParseKey(key)
	enc, err := payload.NewEncrypter(k, "AES-256-CBC")
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := payload.DecodeCommand(p, enc)
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := cmd.Object.Prop("token"); err != nil || string(tok.Str) != "abc" || !cmd.Encrypted {
		t.Errorf("decrypted command: %v %v", tok, err)
	}
}

func TestPushRejectsBadInput(t *testing.T) {
	tg := clitest.NewTarget(t, appconfig.EngineSQLite)
	for _, args := range [][]string{
		{"push"},
		{"push", "Not A Class"},
		{"push", `App\Jobs\X`, "--prop", "novalue"},
		{"push", `App\Jobs\X`, "--laravel-version", "nine"},
		{"push", `App\Jobs\X`, "--backoff", "1,x"},
		{"push", `App\Jobs\X`, "--retry-until", "soon"},
		{"push", `App\Jobs\X`, "--delay", "-1"},
		{"push", `App\Jobs\X`, "--delay", "1.5"},
		{"push", `App\Jobs\X`, "--timeout", "soon"},
		{"push", `App\Jobs\X`, "--props", filepath.Join(t.TempDir(), "missing.json")},
	} {
		_, stderr, code := tg.Run(t, args...)
		if code == 0 || !strings.HasPrefix(stderr, "laraworker: push: ") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	if n := len(tg.Jobs(t)); n != 0 {
		t.Errorf("%d jobs pushed by bad input", n)
	}
}
