package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ARCHITECTURE.md is the map of the packages: a file it names must exist.
// TestDocPathsExist checks every code span that holds a path; these checks
// make sure ARCHITECTURE.md gives it paths to check: a file named without
// its folder (`executor.go`) would pass unchecked, and so would a map that
// stopped citing files at all.

var fileName = regexp.MustCompile(`^[\w.-]+\.(go|md|php|sh|json)$`)

func TestArchitectureNamesFilesByPath(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := proseOnly(string(b))
	cited := 0
	for _, m := range codeSpan.FindAllStringSubmatchIndex(text, -1) {
		span := text[m[2]:m[3]]
		if fileName.MatchString(span) {
			t.Errorf("ARCHITECTURE.md:%d: `%s`: name the file by its path from the repository's root (`./%s` at the root), so that its existence is checked",
				lineOf(string(b), m[0]), span, span)
		}
		if strings.Contains(span, "/") && checkRepoPath(span) == "" && repoPathExists(span) {
			cited++
		}
	}
	if cited < 40 {
		t.Errorf("ARCHITECTURE.md cites %d files and folders of the repository; the map names the files that carry each step (at least 40)", cited)
	}
}

// repoPathExists reports whether span names a file or folder of the
// repository (checkRepoPath also passes spans that are not repository
// paths, such as Go import paths).
func repoPathExists(span string) bool {
	_, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(strings.TrimSuffix(strings.TrimPrefix(span, "./"), "/"))))
	return err == nil
}

func TestArchitectureCheckCatchesABareFileName(t *testing.T) {
	for span, want := range map[string]bool{"executor.go": true, "PROTOCOL.md": true, "worker/executor.go": false, "./main.go": false, "jobqueue.Store": false} {
		if got := fileName.MatchString(span); got != want {
			t.Errorf("fileName.MatchString(%q) = %v, want %v", span, got, want)
		}
	}
}
