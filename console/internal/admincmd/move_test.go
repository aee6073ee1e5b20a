package admincmd_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console/internal/admincmd"
	"github.com/laraworker/laraworker/console/internal/clitest"
	"github.com/laraworker/laraworker/console/internal/testapp"
)

func runMoveCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return clitest.RunStdin(t, "", append([]string{"move"}, args...)...)
}

// TestMoveCommand: --dry-run counts and moves nothing; move moves the
// unreserved jobs of the classes only, prints the counts before and after,
// and names the likely meant class for one that has no job.
func TestMoveCommand(t *testing.T) {
	dir, q := testapp.SqliteApp(t)
	env := []string{"--env", filepath.Join(dir, ".env")}
	for i := 0; i < 3; i++ {
		testapp.PushJob(t, q, `App\Jobs\Heavy`)
	}
	testapp.PushJob(t, q, `App\Jobs\Light`)
	if _, err := q.DB().Exec(`update jobs set reserved_at = 1, attempts = 1 where id = 1`); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runMoveCLI(t, append(env, `App\Jobs\Heavy`, "--from", "default", "--to", "go", "--dry-run")...)
	if code != 0 || !strings.Contains(out, "| App\\Jobs\\Heavy | 2 + 1 reserved") || !strings.Contains(out, "Dry run: 2 jobs would move from default to go") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	if n := testapp.CountRows(t, q, "jobs where queue = 'go'"); n != 0 {
		t.Fatalf("the dry run moved %d jobs", n)
	}

	out, errOut, code = runMoveCLI(t, append(env, `App\Jobs\Heavy`, `App\\Jobs\\Light`, "--from", "default", "--to", "go", "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Classes []admincmd.MoveRow `json:"classes"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := []admincmd.MoveRow{
		{Class: `App\Jobs\Heavy`, FromBefore: 2, FromReservedBefore: 1, Moved: 2, FromReservedAfter: 1, ToAfter: 2},
		{Class: `App\\Jobs\\Light`},
	}
	if len(doc.Classes) != 2 || doc.Classes[0] != want[0] || doc.Classes[1] != want[1] {
		t.Errorf("counts %+v, want %+v", doc.Classes, want)
	}
	if !strings.Contains(errOut, `move: no App\\Jobs\\Light job on queue "default"; did you mean "App\Jobs\Light"?`) {
		t.Errorf("no warning for the doubled backslashes: %q", errOut)
	}
	if n := testapp.CountRows(t, q, "jobs where queue = 'go' and reserved_at is null"); n != 2 {
		t.Errorf("%d jobs on go", n)
	}
	if n := testapp.CountRows(t, q, "jobs where queue = 'default'"); n != 2 {
		t.Errorf("%d jobs left on default, want the reserved Heavy and Light", n)
	}

	for _, bad := range [][]string{
		{`App\Jobs\Heavy`, "--from", "default"},
		{"--from", "default", "--to", "go"},
		{`App\Jobs\Heavy`, "--from", "go", "--to", "go"},
	} {
		if _, errOut, code := runMoveCLI(t, append(env, bad...)...); code != 2 || !strings.Contains(errOut, "move: ") {
			t.Errorf("%v: exit %d, %q", bad, code, errOut)
		}
	}
}
