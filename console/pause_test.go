package console

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/fleet"
)

// withOwnFleet gives tg laraworker's tables behind a table prefix of its
// own (an app folder whose config/database.php names it, read without
// PHP), so tests on the shared database do not see each other's workers
// and pauses.
func (tg *target) withOwnFleet(t *testing.T) *fleet.Store {
	t.Helper()
	prefix := "p" + randomSuffix(t) + "_"
	app := t.TempDir()
	conns := ""
	for _, driver := range engines {
		conns += "'" + driver + "' => ['driver' => '" + driver + "', 'prefix' => '" + prefix + "'],\n"
	}
	for name, content := range map[string]string{
		"artisan":             "",
		".env":                "APP_ENV=testing\n",
		"config/database.php": "<?php\nreturn ['default' => '" + tg.engine + "', 'connections' => [\n" + conns + "]];\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(app, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(app, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	i := slices.Index(tg.flags, "--env")
	tg.flags = append(slices.Clone(tg.flags), "--app", app, "--php", "off")
	tg.flags[i+1] = filepath.Join(app, ".env")
	fl := fleet.On(tg.q.DB(), tg.q.Dialect(), prefix)
	if err := fl.CreateTables(tg.ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fl.DropTables(tg.ctx) })
	return fl
}

func pauseSet(t *testing.T, tg *target, fl *fleet.Store) []string {
	t.Helper()
	ps, err := fl.Pauses(tg.ctx)
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
	forEachEngine(t, func(t *testing.T, tg *target) {
		fl := tg.withOwnFleet(t)
		now := time.Now().Unix()
		stopped := now - 60
		for _, w := range []fleet.WorkerRow{
			{ID: "go:web-1:10:1", Kind: fleet.KindGo, Name: "images", Host: "web-1", PID: 10, StartedAt: now, LastSeenAt: now},
			{ID: "go:web-2:11:1", Kind: fleet.KindGo, Name: "images", Host: "web-2", PID: 11, StartedAt: now, LastSeenAt: now},
			{ID: "go:web-1:12:1", Kind: fleet.KindGo, Name: "mail", Host: "web-1", PID: 12, StartedAt: now, LastSeenAt: now},
			{ID: "go:web-1:9:1", Kind: fleet.KindGo, Name: "old", Host: "web-1", PID: 9, StartedAt: now - 90, LastSeenAt: stopped, StoppedAt: &stopped},
			{ID: "php:web-1:13:1", Kind: fleet.KindPHP, Name: "default", Host: "web-1", PID: 13, StartedAt: now, LastSeenAt: now},
		} {
			if err := fl.UpsertWorker(tg.ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		if _, stderr, code := tg.run(t, "pause"); code != ExitUsage || !strings.Contains(stderr, "--queue QUEUE, --worker ID or --all") {
			t.Errorf("pause without a target: exit %d %q", code, stderr)
		}
		out := tg.mustRun(t, "pause", "--queue", "high,low", "--worker", "images")
		if got := pauseSet(t, tg, fl); !slices.Equal(got, []string{"queue:high", "queue:low", "worker:go:web-1:10:1", "worker:go:web-2:11:1"}) {
			t.Fatalf("pauses after pause: %v\n%s", got, out)
		}
		for _, want := range []string{"Paused queue [high].", "Paused worker [go:web-2:11:1] (images on web-2, pid 11).", "PHP workers are not paused"} {
			if !strings.Contains(out, want) {
				t.Errorf("pause output lacks %q:\n%s", want, out)
			}
		}
		if out := tg.mustRun(t, "pause", "--queue", "high"); !strings.Contains(out, "Queue [high] was paused already.") {
			t.Errorf("second pause: %s", out)
		}
		for arg, want := range map[string]string{
			"go:web-1:9:1":   "worker go:web-1:9:1 has stopped; running Go workers: ",
			"php:web-1:13:1": "is a PHP worker",
			"nosuch":         `no running Go worker has the id or the name "nosuch"; running Go workers: go:web-1:10:1 (images)`,
		} {
			if _, stderr, code := tg.run(t, "pause", "--worker", arg); code != 1 || !strings.Contains(stderr, want) {
				t.Errorf("pause --worker %s: exit %d %q, want %q", arg, code, stderr, want)
			}
		}
		var res struct {
			Continued []pauseTarget `json:"continued"`
		}
		if err := json.Unmarshal([]byte(tg.mustRun(t, "continue", "--queue", "high", "--queue", "nope", "--json")), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Continued) != 2 || !res.Continued[0].Changed || res.Continued[1].Changed {
			t.Errorf("continue --json: %+v", res)
		}
		if got := pauseSet(t, tg, fl); len(got) != 3 || slices.Contains(got, "queue:high") {
			t.Errorf("pauses after continue --queue high: %v", got)
		}
		tg.mustRun(t, "pause", "--all")
		if got := pauseSet(t, tg, fl); len(got) != 4 || !slices.Contains(got, "worker:go:web-1:12:1") {
			t.Errorf("pauses after pause --all: %v", got)
		}
		if out := tg.mustRun(t, "continue", "--all"); !strings.Contains(out, "Continued worker [go:web-1:12:1] (mail on web-1, pid 12).") {
			t.Errorf("continue --all: %s", out)
		}
		if got := pauseSet(t, tg, fl); len(got) != 0 {
			t.Errorf("pauses after continue --all: %v", got)
		}
	})
}
