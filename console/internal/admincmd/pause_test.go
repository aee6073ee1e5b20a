package admincmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/console/internal/admincmd"
	"github.com/laraworker/laraworker/console/internal/clitest"
	"github.com/laraworker/laraworker/internal/fleet"
)

// withOwnFleet gives tg laraworker's tables behind a table prefix of its
// own (an app folder whose config/database.php names it, read without
// PHP), so tests on the shared database do not see each other's workers
// and pauses.
func withOwnFleet(t *testing.T, tg *clitest.Target) *fleet.Store {
	t.Helper()
	prefix := "p" + clitest.RandomSuffix(t) + "_"
	app := t.TempDir()
	conns := ""
	for _, driver := range clitest.Engines {
		conns += "'" + driver + "' => ['driver' => '" + driver + "', 'prefix' => '" + prefix + "'],\n"
	}
	for name, content := range map[string]string{
		"artisan":             "",
		".env":                "APP_ENV=testing\n",
		"config/database.php": "<?php\nreturn ['default' => '" + tg.Engine + "', 'connections' => [\n" + conns + "]];\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(app, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(app, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	i := slices.Index(tg.Flags, "--env")
	tg.Flags = append(slices.Clone(tg.Flags), "--app", app, "--php", "off")
	tg.Flags[i+1] = filepath.Join(app, ".env")
	fl := fleet.On(tg.Q.DB(), tg.Q.Dialect(), prefix)
	if err := fl.CreateTables(tg.Ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fl.DropTables(tg.Ctx) })
	return fl
}

func pauseSet(t *testing.T, tg *clitest.Target, fl *fleet.Store) []string {
	t.Helper()
	ps, err := fl.Pauses(tg.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.Scope+":"+p.Target)
	}
	return out
}

// TestPauseAndContinue: pause and continue write the pause requests the
// dashboard's Control page writes (and every Go worker polls), for queues
// and for running Go workers named by id or --name; stopped and PHP
// workers and unknown names are refused with what there is.
func TestPauseAndContinue(t *testing.T) {
	clitest.ForEachEngine(t, func(t *testing.T, tg *clitest.Target) {
		fl := withOwnFleet(t, tg)
		now := time.Now().Unix()
		stopped := now - 60
		for _, w := range []fleet.WorkerRow{
			{ID: "go:web-1:10:1", Kind: fleet.KindGo, Name: "images", Host: "web-1", PID: 10, StartedAt: now, LastSeenAt: now},
			{ID: "go:web-2:11:1", Kind: fleet.KindGo, Name: "images", Host: "web-2", PID: 11, StartedAt: now, LastSeenAt: now},
			{ID: "go:web-1:12:1", Kind: fleet.KindGo, Name: "mail", Host: "web-1", PID: 12, StartedAt: now, LastSeenAt: now},
			{ID: "go:web-1:9:1", Kind: fleet.KindGo, Name: "old", Host: "web-1", PID: 9, StartedAt: now - 90, LastSeenAt: stopped, StoppedAt: &stopped},
			{ID: "php:web-1:13:1", Kind: fleet.KindPHP, Name: "default", Host: "web-1", PID: 13, StartedAt: now, LastSeenAt: now},
		} {
			if err := fl.UpsertWorker(tg.Ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		if _, stderr, code := tg.Run(t, "pause"); code != console.ExitUsage || !strings.Contains(stderr, "--queue QUEUE, --worker ID or --all") {
			t.Errorf("pause without a target: exit %d %q", code, stderr)
		}
		out := tg.MustRun(t, "pause", "--queue", "high,low", "--worker", "images")
		if got := pauseSet(t, tg, fl); !slices.Equal(got, []string{"queue:high", "queue:low", "worker:go:web-1:10:1", "worker:go:web-2:11:1"}) {
			t.Fatalf("pauses after pause: %v\n%s", got, out)
		}
		for _, want := range []string{"Paused queue [high].", "Paused worker [go:web-2:11:1] (images on web-2, pid 11).", "PHP workers are not paused"} {
			if !strings.Contains(out, want) {
				t.Errorf("pause output lacks %q:\n%s", want, out)
			}
		}
		if out := tg.MustRun(t, "pause", "--queue", "high"); !strings.Contains(out, "Queue [high] was paused already.") {
			t.Errorf("second pause: %s", out)
		}
		for arg, want := range map[string]string{
			"go:web-1:9:1":   "worker go:web-1:9:1 has stopped; running Go workers: ",
			"php:web-1:13:1": "is a PHP worker",
			"nosuch":         `no running Go worker has the id or the name "nosuch"; running Go workers: go:web-1:10:1 (images)`,
		} {
			if _, stderr, code := tg.Run(t, "pause", "--worker", arg); code != 1 || !strings.Contains(stderr, want) {
				t.Errorf("pause --worker %s: exit %d %q, want %q", arg, code, stderr, want)
			}
		}
		var res struct {
			Continued []admincmd.PauseTarget `json:"continued"`
		}
		if err := json.Unmarshal([]byte(tg.MustRun(t, "continue", "--queue", "high", "--queue", "nope", "--json")), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Continued) != 2 || !res.Continued[0].Changed || res.Continued[1].Changed {
			t.Errorf("continue --json: %+v", res)
		}
		if got := pauseSet(t, tg, fl); len(got) != 3 || slices.Contains(got, "queue:high") {
			t.Errorf("pauses after continue --queue high: %v", got)
		}
		tg.MustRun(t, "pause", "--all")
		if got := pauseSet(t, tg, fl); len(got) != 4 || !slices.Contains(got, "worker:go:web-1:12:1") {
			t.Errorf("pauses after pause --all: %v", got)
		}
		if out := tg.MustRun(t, "continue", "--all"); !strings.Contains(out, "Continued worker [go:web-1:12:1] (mail on web-1, pid 12).") {
			t.Errorf("continue --all: %s", out)
		}
		if got := pauseSet(t, tg, fl); len(got) != 0 {
			t.Errorf("pauses after continue --all: %v", got)
		}
	})
}
