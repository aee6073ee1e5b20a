package handlers

import (
	"os/exec"
	"strings"
)

// killOnCancel kills the command itself when the job's context ends.
// Windows has no process groups to signal; processes the command started
// itself are not killed (that would take a job object).
func killOnCancel(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Kill() }
}

// sameEnvName compares variable names as Windows does: case does not
// matter.
func sameEnvName(a, b string) bool { return strings.EqualFold(a, b) }
