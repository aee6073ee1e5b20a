//go:build windows

package phprun

import "os/exec"

// killTreeOnCancel kills the process when its context ends.
func killTreeOnCancel(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Kill() }
}
