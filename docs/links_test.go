package docs

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every link and every repository path a document cites must exist in the
// repository, and no document may cite a file outside it (the machine's
// other checkouts are not part of what a reader has).

var (
	mdLink    = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	mdRefDef  = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	codeSpan  = regexp.MustCompile("`([^`\n]+)`")
	// outside names citations of this machine's other directories.
	outside = regexp.MustCompile(`(?:^|[\s(\x60"'])(/work/|(?:\.\./)+shared/)`)
)

// removedDirs are top-level folders that no longer exist, with what a
// document should name instead (the packages moved in 2026-12; see
// ARCHITECTURE.md).
var removedDirs = map[string]string{
	"dbqueue":      "moved to store/database",
	"sqldb":        "moved to internal/sqldb",
	"dbcache":      "moved to internal/cache/dbcache",
	"redisstore":   "moved to store/redis",
	"redisqueue":   "moved to internal/redisproto",
	"redishorizon": "moved to internal/horizon",
	"rediscache":   "moved to internal/cache/rediscache",
	"redislock":    "moved to internal/cache/redislock",
	"redislimiter": "moved to internal/cache/redislimiter",
	"redisshared":  "moved to internal/cache/redisshared",
	"payload":      "moved to laravel/payload",
	"phpserialize": "moved to laravel/phpserialize",
	"appconfig":    "moved to laravel/appconfig",
	"bridgeproto":  "moved to laravel/bridgeproto",
	"dashboard":    "moved to internal/dashboard",
	"fleet":        "moved to internal/fleet",
	"classaudit":   "moved to internal/classaudit",
	"jobgen":       "moved to internal/jobgen",
	"phpclass":     "moved to internal/phpclass",
	"bench":        "moved to test/bench",
	"e2e":          "moved to test/e2e",
	"reliability":  "moved to test/reliability",
	"cmd":          "cmd/riverbench and cmd/asynqbench moved to test/",
}

func TestDocLinksExist(t *testing.T) {
	files := markdownFiles(t)
	anchorsOf := map[string]map[string]bool{}
	for _, f := range files {
		anchorsOf[f.path] = anchors(f.text)
	}
	for _, f := range files {
		prose := proseOnly(f.text)
		var targets [][]int
		targets = append(targets, mdLink.FindAllStringSubmatchIndex(prose, -1)...)
		targets = append(targets, mdRefDef.FindAllStringSubmatchIndex(prose, -1)...)
		for _, m := range targets {
			target := prose[m[2]:m[3]]
			if urlScheme.MatchString(target) {
				continue
			}
			if msg := checkLink(f.path, target, anchorsOf); msg != "" {
				t.Errorf("%s:%d: link %q: %s", f.path, lineOf(f.text, m[0]), target, msg)
			}
		}
	}
}

// checkLink resolves target against the document at from; it returns
// what is wrong, or "".
func checkLink(from, target string, anchorsOf map[string]map[string]bool) string {
	p, frag, _ := strings.Cut(target, "#")
	file := from
	if p != "" {
		file = path.Join(path.Dir(from), p)
		if file == ".." || strings.HasPrefix(file, "../") {
			return "points outside the repository"
		}
		if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(file))); err != nil {
			return "no such file in the repository"
		}
	}
	if frag == "" || !strings.HasSuffix(file, ".md") {
		return ""
	}
	if a, ok := anchorsOf[file]; ok && !a[strings.ToLower(frag)] {
		return "no heading of " + file + " has the anchor #" + frag
	}
	return ""
}

// movedPaths are folders below the top level that moved, with where to:
// the CHANGELOG names them as they were when it says what changed; any
// other document names where they are now.
var movedPaths = map[string]string{
	"store/redis/protocol":      "internal/redisproto",
	"store/redis/horizon":       "internal/horizon",
	"store/sqs/protocol":        "internal/sqsproto",
	"store/beanstalkd/protocol": "internal/beanstalkproto",
}

// movedTo is where the path p (or the folder it lies in) moved.
func movedTo(p string) (string, bool) {
	for from, to := range movedPaths {
		if p == from || strings.HasPrefix(p, from+"/") {
			return to, true
		}
	}
	return "", false
}

func TestDocPathsExist(t *testing.T) {
	for _, f := range markdownFiles(t) {
		prose := proseOnly(f.text)
		for _, m := range codeSpan.FindAllStringSubmatchIndex(prose, -1) {
			span := prose[m[2]:m[3]]
			if to, moved := movedTo(strings.TrimPrefix(span, "./")); moved {
				if f.path != "CHANGELOG.md" {
					t.Errorf("%s:%d: `%s`: no longer exists: moved to %s", f.path, lineOf(f.text, m[0]), span, to)
				}
				continue
			}
			if msg := checkRepoPath(span); msg != "" {
				t.Errorf("%s:%d: `%s`: %s", f.path, lineOf(f.text, m[0]), span, msg)
			}
		}
	}
}

// checkRepoPath says what is wrong with a code span that names a path of
// this repository (relative to its root), or "" when it is fine or is
// not such a path: a Laravel app's path (`config/queue.php`), a Go import
// path (`net/http`), a system path or a URL path (`/proc/...`, `/jobs`).
func checkRepoPath(span string) string {
	if strings.ContainsAny(span, " \\{}<>$=?&:|,;()") || strings.HasPrefix(span, "/") || !strings.Contains(span, "/") {
		return ""
	}
	p := strings.TrimPrefix(span, "./")
	if strings.HasPrefix(p, "../") {
		if strings.Trim(p, "./") == "" {
			return "" // `../..`: a relative hop, not a file
		}
		return "a path outside the repository: cite Laravel's source (file and version) or a copy inside the repository"
	}
	first, _, _ := strings.Cut(p, "/")
	if why, ok := removedDirs[first]; ok {
		return "no longer exists: " + why
	}
	info, err := os.Stat(filepath.Join(repoRoot, first))
	if !(err == nil && info.IsDir()) && !strings.HasSuffix(p, ".go") {
		return ""
	}
	full := filepath.Join(repoRoot, filepath.FromSlash(strings.TrimSuffix(p, "/")))
	if strings.Contains(p, "*") {
		if matches, _ := filepath.Glob(full); len(matches) == 0 {
			return "matches no file in the repository"
		}
		return ""
	}
	if _, err := os.Stat(full); err != nil {
		return "no such file or directory in the repository"
	}
	return ""
}

func TestDocsCiteNothingOutsideTheRepository(t *testing.T) {
	for _, f := range markdownFiles(t) {
		for _, m := range outside.FindAllStringSubmatchIndex(f.text, -1) {
			t.Errorf("%s:%d: cites %q, outside the repository: cite Laravel's own source (file and version) or a copy inside the repository",
				f.path, lineOf(f.text, m[2]), f.text[m[2]:min(len(f.text), m[2]+40)])
		}
	}
}
