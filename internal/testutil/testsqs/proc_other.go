//go:build !linux

package testsqs

import "os/exec"

func setParentDeathSignal(*exec.Cmd) {}
