package handlers

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testwait"
	"github.com/rs/zerolog"
)

// TestExecKillsTheProcessGroup: at the job's timeout the command's own
// children die with it, not only the command.
func TestExecKillsTheProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	// The child gets its own stdout so the handler does not wait on it.
	h, err := Builtin("exec:"+writeScript(t, "cat >/dev/null; sleep 60 >/dev/null 2>&1 & echo $! > "+pidFile+"; wait\n"), zerolog.Nop(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Handle(ctx, fixtureJob(t, "scalars.json")) }()
	pid := waitForPID(t, pidFile)
	cancel()
	if err := testwait.Recv(t, done, 30*time.Second, "the cancelled command to end"); err == nil || !strings.Contains(err.Error(), "was killed") {
		t.Fatalf("cancelled command: %v", err)
	}
	testwait.Until(t, 5*time.Second, "the killed command's child to exit", func() bool { return processGone(pid) })
}

// waitForPID waits for the command to write its child's pid, a whole line.
func waitForPID(t *testing.T, path string) int {
	t.Helper()
	var raw []byte
	testwait.Until(t, 5*time.Second, "the command to start its child", func() bool {
		var err error
		raw, err = os.ReadFile(path)
		return err == nil && strings.HasSuffix(string(raw), "\n")
	})
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("pid file %q", raw)
	}
	return pid
}

// processGone reports whether pid has exited. A killed child whose parent
// died too is a zombie until PID 1 reaps it, which a container's PID 1 may
// never do, so a zombie counts as gone.
func processGone(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}
