//go:build unix

package handlers

import (
	"os/exec"
	"syscall"
)

// killOnCancel starts the command in a process group of its own and kills
// the whole group when the job's context ends, so a script's children
// (`sleep 30 &`) do not outlive the job.
func killOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// sameEnvName compares variable names as the system does: case matters.
func sameEnvName(a, b string) bool { return a == b }
