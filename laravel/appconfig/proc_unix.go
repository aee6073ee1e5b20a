//go:build unix

package appconfig

import (
	"os/exec"
	"syscall"
)

// noSecretsPipe is empty where the PHP config reader can hand secrets back
// on file descriptor 3.
const noSecretsPipe = ""

// killTreeOnCancel starts cmd in a process group of its own and kills the
// whole group when its context ends, so nothing the app's boot started
// outlives the timeout.
func killTreeOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
