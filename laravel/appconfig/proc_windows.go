//go:build windows

package appconfig

import "os/exec"

// noSecretsPipe says why the app's config is not read through PHP here:
// the reader hands secrets back on an extra file descriptor, which
// Windows processes do not inherit.
const noSecretsPipe = "reading the config through php needs a file descriptor Windows does not pass; the .env and config files are read instead"

// killTreeOnCancel kills the process when its context ends.
func killTreeOnCancel(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Kill() }
}
