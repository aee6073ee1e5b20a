// Package phptest holds what the tests that run the Laravel 8.83 test app
// (testdata/laravel) through real PHP share: the skip rule and a private
// copy of the app.
package phptest

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// NeedPHP skips without php and Debian's Laravel, unless LARAWORKER_E2E
// asks for the PHP tests (then their absence fails).
func NeedPHP(t testing.TB) {
	t.Helper()
	_, err := exec.LookPath("php")
	if err == nil {
		_, err = os.Stat("/usr/share/php/Illuminate")
	}
	if err != nil {
		if os.Getenv("LARAWORKER_E2E") != "" {
			t.Fatalf("php or Debian's php-laravel-framework is missing (testdata/setup-php.sh --install-only): %v", err)
		}
		t.Skip("php or Debian's php-laravel-framework is not installed (testdata/setup-php.sh --install-only)")
	}
}

// RepoRoot is the repository's root folder.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// CopyApp copies the test app (without its .env, databases and logs) to a
// temporary folder and returns its root. The bridge (bridge/) is copied
// beside it as in the repository, where the app's autoloader finds it.
func CopyApp(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	CopyTree(t, filepath.Join(RepoRoot(), "bridge"), filepath.Join(root, "bridge"), nil)
	return copyAppTo(t, filepath.Join(root, "testdata", "laravel"))
}

// CopyAppWithoutBridge copies the test app alone: the bridge is not
// installed there.
func CopyAppWithoutBridge(t testing.TB) string {
	t.Helper()
	return copyAppTo(t, filepath.Join(t.TempDir(), "app"))
}

func copyAppTo(t testing.TB, dst string) string {
	src := filepath.Join(RepoRoot(), "testdata", "laravel")
	CopyTree(t, src, dst, func(rel string) bool {
		return rel == ".env" || strings.HasSuffix(rel, ".sqlite") || strings.HasPrefix(rel, filepath.Join("storage", "logs")+string(filepath.Separator))
	})
	return dst
}

// CopyTree copies src to dst, leaving out the paths skip accepts.
func CopyTree(t testing.TB, src, dst string, skip func(rel string) bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if skip != nil && rel != "." && skip(rel) {
			return nil
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// WriteFile writes content to path, creating its folders.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// BridgeConfig writes config/laraworker.php routing jobs (PHP array
// entries, one per line) to the queue "go".
func BridgeConfig(t testing.TB, app string, jobs ...string) {
	t.Helper()
	src := "<?php\n\nreturn [\n    'queue' => 'go',\n    'connection' => null,\n    'jobs' => [\n"
	for _, j := range jobs {
		src += "        " + j + ",\n"
	}
	WriteFile(t, filepath.Join(app, "config", "laraworker.php"), src+"    ],\n];\n")
}

// StrayVendorAutoload gives a copy of the test app a vendor/autoload.php
// that loads nothing of Laravel, as `composer require` of one package
// leaves in an app whose framework comes from elsewhere (Debian's). Its
// artisan still loads bootstrap/autoload.php: whoever boots the app must
// do what artisan does, not guess from vendor/.
func StrayVendorAutoload(t testing.TB, app string) {
	t.Helper()
	WriteFile(t, filepath.Join(app, "vendor", "autoload.php"),
		"<?php\n\n// Composer's autoloader for one package, no framework.\nspl_autoload_register(function ($class) {});\n")
}

// ComposerLayout turns a copy of the test app into Composer's standard
// layout: artisan requires vendor/autoload.php (Laravel 8's artisan), which
// holds what bootstrap/autoload.php did, and bootstrap/autoload.php is gone.
func ComposerLayout(t testing.TB, app string) {
	t.Helper()
	loader, err := os.ReadFile(filepath.Join(app, "bootstrap", "autoload.php"))
	if err != nil {
		t.Fatal(err)
	}
	// vendor/ is as deep below the app as bootstrap/: the loader's
	// dirname(__DIR__) paths hold.
	WriteFile(t, filepath.Join(app, "vendor", "autoload.php"), string(loader))
	if err := os.Remove(filepath.Join(app, "bootstrap", "autoload.php")); err != nil {
		t.Fatal(err)
	}
	artisan, err := os.ReadFile(filepath.Join(app, "artisan"))
	if err != nil {
		t.Fatal(err)
	}
	old := "require __DIR__.'/bootstrap/autoload.php';"
	if !strings.Contains(string(artisan), old) {
		t.Fatalf("artisan no longer holds %q", old)
	}
	WriteFile(t, filepath.Join(app, "artisan"), strings.Replace(string(artisan), old, "require __DIR__.'/vendor/autoload.php';", 1))
}

// RetryJSON returns each JSON document as `php artisan queue:retry`
// writes a payload back: json_decode($doc, true), then json_encode with
// no flags (an empty object becomes [], an object keyed 0..n-1 a list,
// non-ASCII \u escapes), by the php on PATH. Documents hold no raw
// newline (json_encode escapes them).
func RetryJSON(t testing.TB, docs ...[]byte) [][]byte {
	t.Helper()
	if _, err := exec.LookPath("php"); err != nil {
		NeedPHP(t)
	}
	cmd := exec.Command("php", "-r", `while (($line = fgets(STDIN)) !== false) { echo json_encode(json_decode(rtrim($line, "\n"), true)), "\n"; }`)
	var in strings.Builder
	for _, d := range docs {
		if strings.ContainsRune(string(d), '\n') {
			t.Fatalf("phptest: a document with a raw newline: %.80s", d)
		}
		in.Write(d)
		in.WriteByte('\n')
	}
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("phptest: php json round trip: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(docs) {
		t.Fatalf("phptest: php wrote %d documents for %d", len(lines), len(docs))
	}
	res := make([][]byte, len(lines))
	for i, l := range lines {
		res[i] = []byte(l)
	}
	return res
}
