// Package gobuild builds the module's programs for tests that run them as
// child processes (signals, exit codes, a worker beside the test).
//
// It builds with `go run -exec cp` rather than `go build -o`: since Go
// 1.24 the go command keeps the executables `go run` links in its build
// cache, and `go build` links again every time. A test package that
// builds the laraworker binary paid a link of about 4 s on each run (the
// fast loop links it in five packages); from a warm cache the copy takes
// about half a second.
package gobuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Program builds the main package pkg (as the go command names it, from
// dir) into the executable out (relative to dir unless absolute; its
// directory is made, as go build -o does), with ldflags when not empty.
func Program(ctx context.Context, dir, pkg, out, ldflags string) error {
	cp, err := exec.LookPath("cp")
	if err != nil {
		return fmt.Errorf("building %s: %w", pkg, err)
	}
	target := out
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return fmt.Errorf("building %s: %w", pkg, err)
	}
	// go run runs "cp <the linked executable> out" instead of the program.
	args := []string{"run", "-exec", cp}
	if ldflags != "" {
		args = append(args, "-ldflags", ldflags)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg, out)...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}
