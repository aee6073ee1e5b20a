//go:build unix

package phprun

import (
	"os/exec"
	"syscall"
)

// killTreeOnCancel starts cmd in a process group of its own and kills the
// whole group when its context ends, so nothing the app's boot started
// outlives the timeout.
func killTreeOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
