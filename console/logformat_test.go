package console

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console/internal/testapp"
)

// TestTextLogThroughAPipe: --log-format text writes plain lines when
// stderr is a pipe (package output tests the terminal's colours).
func TestTextLogThroughAPipe(t *testing.T) {
	const esc = "\x1b["
	// The real binary, its stderr a pipe.
	dir, _ := testapp.SqliteApp(t)
	out, code := runWorkCLI(t, "--env", filepath.Join(dir, ".env"), "--stop-when-empty", "--route", `App\Jobs\A=noop`, "--log-format", "text")
	if code != 0 || !strings.Contains(out, "worker started") || strings.Contains(out, esc) {
		t.Errorf("exit %d, text log through a pipe:\n%q", code, out)
	}
}
