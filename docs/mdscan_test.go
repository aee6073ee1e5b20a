package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// repoRoot is the repository's root, seen from this package's directory.
const repoRoot = ".."

// mdFile is one Markdown document of the repository.
type mdFile struct {
	path string // slash-separated, relative to the repository root
	text string
}

// markdownFiles reads every .md file of the repository (not .git, not
// vendored or installed trees).
func markdownFiles(t *testing.T) []mdFile {
	t.Helper()
	var out []mdFile
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != repoRoot && (strings.HasPrefix(name, ".") || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".md") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(repoRoot, p)
		if err != nil {
			return err
		}
		out = append(out, mdFile{path: filepath.ToSlash(rel), text: string(b)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no Markdown file found under the repository root")
	}
	return out
}

// lineOf is the 1-based line of offset off in text, for messages.
func lineOf(text string, off int) int {
	return strings.Count(text[:off], "\n") + 1
}

var fence = regexp.MustCompile("(?m)^ {0,3}(```|~~~)")

// proseOnly blanks fenced code blocks (keeping offsets and line numbers):
// a command in a code block is not a citation.
func proseOnly(text string) string {
	b := []byte(text)
	locs := fence.FindAllStringIndex(text, -1)
	for i := 0; i+1 < len(locs); i += 2 {
		for j := locs[i][0]; j < locs[i+1][1]; j++ {
			if b[j] != '\n' {
				b[j] = ' '
			}
		}
	}
	return string(b)
}

var (
	heading    = regexp.MustCompile(`(?m)^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$`)
	inlineLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// anchors are the fragment ids GitHub gives the headings of a document:
// the heading's text lower-cased, punctuation dropped, spaces as hyphens,
// "-1", "-2"... for repeats.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(proseOnly(text), -1) {
		h := inlineLink.ReplaceAllString(m[1], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}
