package payloadcmd_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console"
	"github.com/laraworker/laraworker/console/internal/clitest"
)

// TestInspectByIDAndUUID: inspect --id and --uuid print the document
// inspect FILE prints for a job of the jobs table, then for the same job
// once failed (failed_jobs), with the row's columns; a job that left the
// table is named with a hint.
func TestInspectByIDAndUUID(t *testing.T) {
	clitest.ForEachEngine(t, func(t *testing.T, tg *clitest.Target) {
		j := tg.Pushed(t, `App\Jobs\Inspected`, "--queue", "high", "--prop", "podcast=42")
		var doc struct {
			Kind    string         `json:"kind"`
			Payload map[string]any `json:"payload"`
			Command struct {
				Class string `json:"class"`
			} `json:"command"`
			Row map[string]any `json:"row"`
		}
		read := func(args ...string) {
			t.Helper()
			doc.Row = nil
			out := tg.MustRun(t, append([]string{"inspect", "--compact"}, args...)...)
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("inspect %v: %v\n%s", args, err, out)
			}
		}
		read("--id", strconv.FormatInt(j.ID, 10))
		uuid, _ := doc.Payload["uuid"].(string)
		if doc.Kind != "payload" || doc.Command.Class != `App\Jobs\Inspected` || doc.Row["table"] != tg.Cfg.JobsTable ||
			doc.Row["id"] != float64(j.ID) || doc.Row["queue"] != "high" || doc.Row["reserved_at"] != nil || uuid == "" {
			t.Fatalf("inspect --id: %+v", doc)
		}
		read("--uuid", uuid)
		if doc.Row["table"] != tg.Cfg.JobsTable || doc.Row["id"] != float64(j.ID) {
			t.Fatalf("inspect --uuid of a queued job: %+v", doc.Row)
		}
		clitest.FailJob(t, tg.Ctx, tg.Q, j)
		read("--uuid", uuid)
		if doc.Row["table"] != tg.Cfg.FailedTable || doc.Row["uuid"] != uuid || !strings.Contains(doc.Row["exception"].(string), "boom") ||
			doc.Command.Class != `App\Jobs\Inspected` {
			t.Fatalf("inspect --uuid of a failed job: %+v", doc)
		}
		failedID := strconv.FormatFloat(doc.Row["id"].(float64), 'f', 0, 64)
		read("--failed", "--id", failedID)
		if doc.Row["uuid"] != uuid {
			t.Fatalf("inspect --failed --id: %+v", doc.Row)
		}
		if _, stderr, code := tg.Run(t, "inspect", "--id", strconv.FormatInt(j.ID, 10)); code != 1 || !strings.Contains(stderr, "add --failed") {
			t.Errorf("inspect --id of a job gone: exit %d %q", code, stderr)
		}
		if _, stderr, code := tg.Run(t, "inspect", "--uuid", "0000-none"); code != 1 || !strings.Contains(stderr, "no job with uuid 0000-none in") {
			t.Errorf("inspect --uuid unknown: exit %d %q", code, stderr)
		}
		if _, _, code := tg.Run(t, "inspect", "--failed", "x.json"); code != console.ExitUsage {
			t.Errorf("inspect --failed FILE: exit %d", code)
		}
	})
}
