package gobuild

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Program builds a runnable program into a directory that does not exist
// yet, with the -ldflags it is given, as go build -o would.
func TestProgramBuildsIntoANewDirectory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "not", "yet", "laraworker")
	flags := "-X github.com/laraworker/laraworker/console.Version=9.9.9-gobuild"
	if err := Program(context.Background(), "../../..", ".", out, flags); err != nil {
		t.Fatal(err)
	}
	got, err := exec.Command(out, "--version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(got)) != "laraworker version 9.9.9-gobuild" {
		t.Fatalf("the built program says %q (%v)", got, err)
	}
}

// A package that does not build gives the go command's error.
func TestProgramSaysWhyABuildFailed(t *testing.T) {
	err := Program(context.Background(), "../../..", "./no/such/package", filepath.Join(t.TempDir(), "x"), "")
	if err == nil || !strings.Contains(err.Error(), "no/such/package") {
		t.Fatalf("error %v: want the go command's, naming the package", err)
	}
}
