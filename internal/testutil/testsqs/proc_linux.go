package testsqs

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal kills the server when the test binary dies without
// running Main's cleanup (a panic, a timeout).
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
